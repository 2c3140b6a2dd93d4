"""Config names that changed keep working for one release, with a warning in the server log.

Names follow one pattern: durations end in `_seconds`, bounds start with `max_`. An old name
is declared with `renamed_to(...)` on the class that owns the new one; setting it (in a config
file or on the command line) sets the new name and logs what to write instead.
"""

from __future__ import annotations

import logging
from typing import Any

from traitlets import All, HasTraits, TraitType, observe


def renamed_to(new_name: str, trait: type[TraitType[Any, Any]]) -> TraitType[Any, Any]:
    """The old config name of `new_name`, of the same trait type (so the command line parses
    it the same way); unset (None) unless someone still uses it."""
    return trait(None, allow_none=True, config=True,
                 help=f"Deprecated: use {new_name}. This old name is still read for one "
                      "release.").tag(renamed_to=new_name)


class RenamedConfig(HasTraits):
    """Forwards every old name declared with `renamed_to` to its new name."""

    @observe(All)
    def _forward_renamed(self, change: Any) -> None:
        new_name = self.trait_metadata(change["name"], "renamed_to")
        if new_name is None or change["new"] is None:
            return
        owner = type(self).__name__
        log = getattr(self, "log", logging.getLogger(__name__))
        log.warning("%s.%s is deprecated and will be removed: use %s.%s instead.",
                    owner, change["name"], owner, new_name)
        setattr(self, new_name, change["new"])
