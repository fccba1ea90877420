"""What the server serves besides GraphQL: downloads (leaderboards, a model's results, the
export), Atom feeds, the front door and its guides, and the health checks."""

from server.resources.downloads import Downloads
from server.resources.every_eval_ever import eee_export
from server.resources.feeds import Feeds
from server.resources.front_door import favicon, front_page, guide
from server.resources.health import Readiness, healthz
from server.resources.releases import Releases

__all__ = [
    "Downloads",
    "Feeds",
    "Readiness",
    "Releases",
    "eee_export",
    "favicon",
    "front_page",
    "guide",
    "healthz",
]
