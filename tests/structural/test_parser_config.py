"""The parser's renamed config: the old name still works for one release, and says so."""

from __future__ import annotations

import logging

from traitlets.config import Config

from jupyter_agent_tools.structural.provider import ParserProvider


def test_tree_cache_mb_still_sets_max_tree_cache_mb(caplog):
    config = Config()
    config.ParserProvider.tree_cache_mb = 16
    with caplog.at_level(logging.WARNING):
        provider = ParserProvider(config=config, log=logging.getLogger("parser"))
    assert provider.max_tree_cache_mb == 16
    # The workers' cache budget follows the new name (16 MiB over the workers).
    assert sum(w.budget_bytes for w in provider.pool.workers) <= 16 * 2**20
    assert "ParserProvider.tree_cache_mb is deprecated" in caplog.text
    assert "use ParserProvider.max_tree_cache_mb" in caplog.text
