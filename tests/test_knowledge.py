"""`Knowledge`: one object holds the catalog, overlay, published rows and priors; `reload()` drops them all and
`without(sources)` is a leave-one-source-out view."""

from __future__ import annotations

from specpick.tools.catalog.knowledge import knowledge
from specpick.tools.catalog.published import load_published, measurement_sources
from specpick.tools.catalog.tables import get_catalog
from specpick.tools.model.prior_rows import load_prior_rows


def test_reload_rebuilds_every_fact_it_holds() -> None:
    k = knowledge()
    before = (get_catalog(), load_published(), load_prior_rows())
    assert (get_catalog(), load_published(), load_prior_rows()) == before  # kept between calls
    k.reload()
    after = (get_catalog(), load_published(), load_prior_rows())
    assert all(a is not b for a, b in zip(after, before, strict=True))
    assert [m.repo_id for m in after[0].models] == [m.repo_id for m in before[0].models]


def test_a_view_shares_source_independent_facts_and_keeps_its_own_tables() -> None:
    k = knowledge()
    source = load_published()[0].source_id
    view = k.without({source})
    assert view is k.without([source]) and k.without(()) is k and view.excluded == {source}
    assert view.shared("catalog", lambda: None) is get_catalog()
    kept = view.derived("test.kept", lambda: [r for r in load_published()
                                              if view.keeps(measurement_sources(r.row_id, r.source_id))])
    assert kept and all(r.source_id != source for r in kept)
    assert len(k.derived("test.kept", lambda: list(load_published()))) == len(load_published()) > len(kept)
    k.reload()
    assert k.without({source}) is not view


def test_a_cached_answer_that_reads_the_catalog_is_forgotten_by_reload(monkeypatch) -> None:
    # A prior row's verifier family comes from the catalog: a model added by an overlay must change the answer
    # in the same process once the catalog is reloaded.
    from specpick.tools.catalog.tables import Catalog
    from specpick.tools.model import prior_rows

    knowledge().reload()
    assert prior_rows.row_family("Zeta-Mini-9B (chat)") == ""
    known = get_catalog().model("llama-3.1-8b")
    added = known.model_copy(update={"repo_id": "zeta/Zeta-Mini-9B", "aliases": (), "family": "zeta (dense)"})
    monkeypatch.setattr("specpick.tools.catalog.tables.build_catalog",
                        lambda: (c := Catalog(), c.add_rows([added], []))[0])
    assert prior_rows.row_family("Zeta-Mini-9B (chat)") == ""  # kept until the reload
    knowledge().reload()
    assert prior_rows.row_family("Zeta-Mini-9B (chat)") == "zeta"
    monkeypatch.undo()
    knowledge().reload()


def test_reload_drops_the_tables_built_from_published_and_engine_rows(monkeypatch) -> None:
    # Issue 33: these were module lru_caches over the rows a reload re-reads; each is now kept on Knowledge, so a
    # reload makes the next call rebuild it from whatever the rows are then.
    from specpick.tools.calibration import engine_rows
    from specpick.tools.model import prior_rows, prior_rules, same_setup

    built: list[str] = []
    for module, name in ((same_setup, "_paper_rows"), (prior_rules, "tree_factor"),
                         (prior_rows, "draft_ratio_slope"), (engine_rows, "load_engine_rows")):
        fn = getattr(module, name)
        first = fn()
        assert fn() is first  # cached between reloads
        knowledge().reload()
        again = fn()
        assert again == first and again is not first, name  # rebuilt after the reload
        built.append(name)
    assert len(built) == 4
