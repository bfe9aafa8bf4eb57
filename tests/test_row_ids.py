"""Row ids are ``{source_id}/{n}`` (tools/catalog/row_ids.py): unique, and stable when rows are added elsewhere."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from importlib import resources

import pytest

from scripts.build_priors import extra_rows
from specpick.tools.calibration.engine_rows import engine_rows_from_text, load_engine_rows
from specpick.tools.catalog.published import PublishedRow, load_published, read_cells, rows_from_text
from specpick.tools.catalog.row_ids import prior_id, source_ordinal_ids
from specpick.tools.model.priors import load_prior_rows

Loader = Callable[[str], Sequence[PublishedRow]]
FILES: list[tuple[str, Loader]] = [
    ("published_measurements.csv", rows_from_text), ("engine_measurements.csv", engine_rows_from_text),
]


def _text(name: str) -> str:
    return resources.files("specpick.tools").joinpath("data", name).read_text("utf-8")


def _render(cells: list[dict[str, str]], columns: list[str]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(cells)
    return buf.getvalue()


def _ids(rows: Sequence[PublishedRow]) -> list[str]:
    return [r.row_id for r in rows]


def test_ordinals_count_within_each_source_in_file_order():
    assert source_ordinal_ids(["A", "B", "A", "A", "B"]) == ["A/1", "B/1", "A/2", "A/3", "B/2"]
    assert source_ordinal_ids(["A", "C"], after=["A", "B"]) == ["A/2", "C/1"]
    assert prior_id("EAGLE3-T1/3") == "A:EAGLE3-T1/3"


def test_ids_are_unique_across_every_measurement_table():
    rows = [*load_published(), *extra_rows(), *load_engine_rows()]
    ids = _ids(rows)
    assert len(ids) == len(set(ids))
    for r in rows:
        # a "/" inside a source id would make two different (source, n) pairs print the same id
        assert r.source_id and "/" not in r.source_id, r.source_id
        assert r.row_id.rsplit("/", 1)[0] == r.source_id


def test_prior_ids_are_their_rows_ids_and_unique():
    priors = load_prior_rows()
    assert [p.prior_id for p in priors] == [prior_id(p.published_row) for p in priors]
    assert len({p.prior_id for p in priors}) == len(priors)


def test_loading_the_shipped_text_gives_the_cached_rows():
    assert rows_from_text(_text("published_measurements.csv")) == load_published()
    assert engine_rows_from_text(_text("engine_measurements.csv")) == load_engine_rows()


@pytest.mark.parametrize("name, load", FILES)
def test_a_row_for_a_new_source_at_the_top_moves_no_existing_id(name: str, load: Loader):
    text = _text(name)
    cells = read_cells(text)
    columns = next(csv.reader(text.splitlines()))
    new = {**cells[0], "source_id": "NEW-SOURCE"}
    before, after = _ids(load(text)), _ids(load(_render([new, *cells], columns)))
    assert after[0] == "NEW-SOURCE/1"
    assert after[1:] == before


@pytest.mark.parametrize("name, load", FILES)
def test_a_row_inserted_into_a_source_moves_only_that_source(name: str, load: Loader):
    text = _text(name)
    cells = read_cells(text)
    columns = next(csv.reader(text.splitlines()))
    source = cells[-1]["source_id"]
    first = next(i for i, c in enumerate(cells) if c["source_id"] == source)
    edited = [*cells[:first], dict(cells[first]), *cells[first:]]  # a new first row of that source
    before = _ids(load(text))
    after = _ids(load(_render(edited, columns)))
    del after[first]
    moved = {old for old, new in zip(before, after, strict=True) if old != new}
    assert moved and all(i.startswith(source + "/") for i in moved)
