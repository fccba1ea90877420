"""The almanac's steps of Strawberry's request pipeline, as schema extensions.

For each operation, in order: its document parsed and validated under the document limits, with
a memory (`document_checks`); its cost computed and charged to the client's budget (`metering`);
its answer kept for reuse until the data changes (`answer_reuse`); unexpected errors masked
(`masking`). What they share across requests is in `services`. An operation run without
services (the CLI, a test calling `schema.execute`) runs unchecked and unmetered.
"""
