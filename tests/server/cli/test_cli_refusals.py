"""The `almanac` command, run as a user runs it (a process of its own), refuses what cannot be
stored: control characters and noncharacters in a key's name, in an import's names, notes and
sources, in `--by`; a CSV row longer than its header, a backup into a missing folder, a port it
cannot serve on: each in one line naming the input, with nothing written. What it shows of
stored or imported text is escaped."""

import asyncio
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from store import Collection, connect, prepare
from store.seed import load_bundled_dataset

ROOT = Path(__file__).parents[3]


def almanac(*args: str) -> subprocess.CompletedProcess[str]:
    """`almanac ...` on the test's own data directory (ALMANAC_DATA_DIR, set for every test)."""
    environment = {k: v for k, v in os.environ.items() if k != "ALMANAC_MONGODB_URI"}
    return subprocess.run(
        [sys.executable, "-m", "server.cli", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_key_name_with_a_control_character_is_refused(data_dir: Path) -> None:
    refused = almanac("keys", "create", "--name", "ops\x1b[2J", "--scope", "read")
    assert refused.returncode == 2
    assert "a key's name holds the control character U+001B at position 4" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert refused.stdout == ""  # no key made


def test_noncharacters_are_refused_in_a_key_name_and_an_import(
    data_dir: Path, tmp_path: Path
) -> None:
    refused = almanac("keys", "create", "--name", "ops\uffff", "--scope", "read")
    assert refused.returncode == 2
    assert "a key's name holds the noncharacter U+FFFF at position 4" in refused.stderr
    assert refused.stdout == ""
    bundled = load_bundled_dataset()
    dataset = {"format": bundled["format"], "labs": [{"slug": "acme", "name": "Acme\ufffe"}]}
    path = tmp_path / "labs.json"
    path.write_text(json.dumps(dataset), encoding="utf-8")
    imported = almanac("import", str(path))
    assert imported.returncode == 1
    assert (
        "rejected  labs acme: line 1: name: holds the noncharacter U+FFFE at position 5"
        in imported.stdout
    )


def test_an_import_refuses_control_characters_naming_each_field(
    data_dir: Path, tmp_path: Path
) -> None:
    bundled = load_bundled_dataset()
    model = {**bundled["models"][0], "slug": "forged", "name": "Forged\u202e", "aliases": []}
    lab = {"slug": "acme", "name": "Acme\x00"}
    foreign = {"slug": "evil\x1b[2J", "name": "Evil"}
    dataset = {"format": bundled["format"], "labs": [lab, foreign], "models": [model]}
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(dataset), encoding="utf-8")

    imported = almanac("import", str(path))
    assert imported.returncode == 1
    assert (
        "rejected  labs acme: line 1: name: holds the control character U+0000 at position 5"
        in imported.stdout
    )
    assert (
        "rejected  models forged: line 1: name: holds the control character U+202E at position 7"
        in imported.stdout
    )
    assert "0 created" in imported.stdout
    # What the file holds is shown escaped: no terminal escape reaches the screen.
    assert "rejected  labs evil\\x1b[2J: line 1: slug: " in imported.stdout
    assert "\x1b" not in imported.stdout


def test_keys_list_shows_a_name_stored_before_names_were_checked_escaped(
    data_dir: Path,
) -> None:
    async def store_key() -> None:
        store = connect(None, "almanac", data_dir)
        await prepare(store)
        await store.insert(
            Collection.API_KEYS,
            {
                "key_id": "0123456789ab",
                "name": "ops\x1b[2J\nforged",
                "scope": "read",
                "secret_sha256": "0" * 64,
                "created_at": "2026-11-01T00:00:00Z",
                "revoked_at": None,
            },
        )
        await store.close()

    asyncio.run(store_key())
    listed = almanac("keys", "list")
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.startswith("ops\\x1b[2J\\nforged\tread\t")
    assert len(listed.stdout.splitlines()) == 1


def test_a_csv_cell_is_not_trimmed_into_a_formula(data_dir: Path, tmp_path: Path) -> None:
    """A leading CR used to be trimmed away: "\\r=1+1" stored as the formula "=1+1"."""
    assert almanac("seed").returncode == 0
    rows = tmp_path / "rows.csv"
    rows.write_text(
        "benchmark,read_on,model_name,score,note\n"
        'code-interpreter-benchmark-math,2026-11-20,"\r=1+1",50,fine\n'
        'code-interpreter-benchmark-math,2026-11-20,Qwen-14B-Chat,50,"\x1b[31m"\n',
        encoding="utf-8",
        newline="",
    )
    imported = almanac("import", str(rows), "--allow-removals")
    assert imported.returncode == 1
    # (The file is read with universal newlines: the CR arrives as an LF.)
    assert "line[2].model_name: holds the control character U+000" in imported.stdout
    assert "line[3].note: holds the control character U+001B at position 1" in imported.stdout
    assert "0 created, 0 updated" in imported.stdout


def test_who_an_import_is_recorded_as_is_checked_too(data_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "bundled.json"
    path.write_text(json.dumps(load_bundled_dataset()), encoding="utf-8")
    refused = almanac("import", str(path), "--by", "ci\nINFO: forged")
    assert refused.returncode == 2
    assert "Invalid value for --by: holds the control character U+000A at position 3" in (
        refused.stderr
    )
    assert "Imported" not in refused.stdout


def test_a_csv_row_longer_than_its_header_is_one_line_naming_it(
    data_dir: Path, tmp_path: Path
) -> None:
    rows = tmp_path / "rows.csv"
    rows.write_text(
        "benchmark,read_on,model_name,score\n"
        "code-interpreter-benchmark-math,2026-11-20,Qwen-14B-Chat,50\n"
        "code-interpreter-benchmark-math,2026-11-20,ChatGLM3-6B,40,forgotten\n",
        encoding="utf-8",
    )
    refused = almanac("import", str(rows))
    assert refused.returncode == 1
    assert refused.stderr == (
        f"Error: {rows} cannot be imported: line[3]: 5 fields, where the header names 4\n"
    )
    assert refused.stdout == ""


def test_a_backup_into_a_missing_folder_is_one_line(data_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "no-such-folder" / "almanac.sqlite3"
    refused = almanac("backup", str(target))
    assert refused.returncode == 1
    assert refused.stderr.splitlines()[-1] == (
        f"Error: {target} cannot be written: there is no folder {target.parent}"
    )
    assert "Traceback" not in refused.stderr
    assert not target.parent.exists()


def test_serve_on_a_port_in_use_is_one_line_before_anything_is_made(data_dir: Path) -> None:
    """It used to seed the new data directory, make and log an admin key, start the app, and
    only then fail to bind, in 8 log lines."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        refused = almanac("serve", "--port", str(port))
    assert refused.returncode == 2
    assert refused.stderr == f"Cannot serve on 127.0.0.1:{port}: Address already in use.\n"
    assert refused.stdout == ""
    assert not data_dir.exists()  # not seeded, no admin key made
