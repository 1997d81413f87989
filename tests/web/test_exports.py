"""A tournament's exports over HTTP: its standings as CSV, its records as JSON Lines or a zip.

Against a real node whose bots played a real round-robin over gRPC: the files hold what the API's
views hold (the standings, each finished match's record in schedule order); a table of duplicate play
still sealed is left out until every table dealing its cards is over; a node with private reads
serves them to a reader only; a bot's name cannot make the CSV run a formula in a spreadsheet.
"""

from __future__ import annotations

import csv
import io
import json
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.cli import main
from arena.tournament.export import STANDINGS_COLUMNS, ZipStream, csv_cell, standings_csv
from tests.web.site import ADMIN, TOURNAMENT, Site, get, held_field_duplicate

Fetched = tuple[int, dict[str, str], bytes]


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def fetch(site: Site, path: str, token: str = "") -> Fetched:
    """GET ``path``: (status, headers, body as bytes)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(site.url + path, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status, dict(reply.headers), reply.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def records_in_order(site: Site, tournament_id: str, token: str = "") -> list[dict[str, Any]]:
    """The tournament's finished matches' records as the API serves them one by one, in schedule order."""
    _, page = get(site, f"/api/v1/tournaments/{tournament_id}/matches?limit=200", token)
    out = []
    for m in page["items"]:
        status, record = get(site, f"/api/v1/matches/{m['match_id']}/record", token)
        assert status == 200, record
        out.append(record)
    return out


def jsonl(body: bytes) -> list[dict[str, Any]]:
    assert body.endswith(b"\n") or body == b""
    return [json.loads(line) for line in body.decode().splitlines()]


def unzipped(body: bytes) -> list[tuple[str, dict[str, Any]]]:
    with zipfile.ZipFile(io.BytesIO(body)) as z:
        assert z.testzip() is None
        return [(info.filename, json.loads(z.read(info))) for info in z.infolist()]


# ------------------------------------------------------------------ the files
def test_the_standings_download_as_csv_as_the_page_shows_them(site: Site) -> None:
    status, headers, body = fetch(site, f"/api/v1/tournaments/{TOURNAMENT}/standings.csv")
    assert status == 200 and headers["Content-Type"] == "text/csv; charset=utf-8"
    assert headers["Content-Disposition"] == f'attachment; filename="{TOURNAMENT}-standings.csv"'
    rows = list(csv.DictReader(io.StringIO(body.decode())))
    _, t = get(site, f"/api/v1/tournaments/{TOURNAMENT}")
    assert [r["bot"] for r in rows] == [s["bot"] for s in t["standings"]]
    for row, s in zip(rows, t["standings"], strict=True):
        assert tuple(row) == STANDINGS_COLUMNS
        for column in ("rank", "played", "wins", "draws", "losses", "points_for", "points_against", "diff"):
            assert int(row[column]) == s[column]
        assert float(row["score"]) == s["score"] and row["buchholz"] == ""


def test_the_records_download_as_json_lines_and_as_a_zip_in_schedule_order(site: Site) -> None:
    expected = records_in_order(site, TOURNAMENT)
    assert len(expected) == 12
    status, headers, body = fetch(site, f"/api/v1/tournaments/{TOURNAMENT}/records.jsonl")
    assert status == 200 and headers["Content-Type"] == "application/x-ndjson"
    assert headers["Content-Disposition"] == f'attachment; filename="{TOURNAMENT}-records.jsonl"'
    counts = (headers["X-Records"], headers["X-Records-Sealed"], headers["X-Records-Aborted"])
    assert counts == ("12", "0", "0")
    assert jsonl(body) == expected
    status, headers, body = fetch(site, f"/api/v1/tournaments/{TOURNAMENT}/records.zip")
    assert status == 200 and headers["Content-Type"] == "application/zip"
    files = unzipped(body)
    assert [name for name, _ in files] == [f"{r['match_id']}.json" for r in expected]
    assert [record for _, record in files] == expected


@pytest.mark.parametrize("kind", ["standings.csv", "records.jsonl", "records.zip"])
def test_an_unknown_tournament_s_export_is_a_json_404(site: Site, kind: str) -> None:
    status, body = get(site, f"/api/v1/tournaments/no-such-tournament/{kind}")
    assert status == 404 and "no tournament" in body["error"]


@pytest.mark.security
def test_a_node_with_private_reads_exports_to_its_readers_only(tmp_path: Path) -> None:
    site = Site(tmp_path, private_reads=True)
    try:
        for kind in ("standings.csv", "records.jsonl", "records.zip"):
            status, body = get(site, f"/api/v1/tournaments/{TOURNAMENT}/{kind}")
            assert status == 401 and "credential" in body["error"]
            status, body = get(site, f"/api/v1/tournaments/{TOURNAMENT}/{kind}", token="not-a-token")
            assert status == 401
        status, _, body = fetch(site, f"/api/v1/tournaments/{TOURNAMENT}/records.jsonl", ADMIN)
        assert status == 200 and jsonl(body) == records_in_order(site, TOURNAMENT, ADMIN)
    finally:
        site.close()


@pytest.mark.security
@pytest.mark.slow
def test_a_sealed_table_is_left_out_of_the_records_until_its_twin_is_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """Field duplicate: tables 0 and 1 of the first quartet deal the same cards. While table 1 is
    held, every other table is over: the records hold all of them but table 0 (sealed, counted in
    X-Records-Sealed), and none of table 0's cards nor its seed; once table 1 is over, all twelve."""
    admin_file = tmp_path / "admin.token"
    admin_file.write_text(ADMIN)
    site, gate, t0, t1 = held_field_duplicate(tmp_path, "fx")
    try:
        assert site.running is not None
        deadline = time.monotonic() + 90
        while get(site, "/api/v1/tournaments/fx")[1]["matches_done"] < 11:
            assert time.monotonic() < deadline, "the other tables were not over after 90 s"
            time.sleep(0.1)
        early: list[bytes] = []
        for kind in ("records.jsonl", "records.zip"):
            status, headers, body = fetch(site, f"/api/v1/tournaments/fx/{kind}")
            assert status == 200 and (headers["X-Records"], headers["X-Records-Sealed"]) == ("10", "1")
            early.append(body)
        ids = [r["match_id"] for r in jsonl(early[0])]
        assert t0 not in ids and t1 not in ids and len(ids) == 10
        # the command line's export leaves it out too, and says so
        out = tmp_path / "fx.jsonl"
        code, said, err = cli(capsys, "tournament", "export", "fx", "--records", "jsonl", "-o", str(out),
                              "--address", site.running.address, "--admin-token-file", str(admin_file))
        assert code == 0, err
        assert said.splitlines() == [f"tournament fx: wrote the records of 10 matches to {out}",
                                     "1 sealed table left out: a record is served once every table dealing "
                                     "its cards is over; export again then"]
        assert out.read_bytes() == early[0]
        assert [name for name, _ in unzipped(early[1])] == [f"{m}.json" for m in ids]
        gate.set()
        deadline = time.monotonic() + 60
        while get(site, "/api/v1/tournaments/fx")[1]["matches_done"] < 12:
            assert time.monotonic() < deadline, "table 1 was not over after 60 s"
            time.sleep(0.1)
        status, headers, body = fetch(site, "/api/v1/tournaments/fx/records.jsonl")
        assert (headers["X-Records"], headers["X-Records-Sealed"]) == ("12", "0")
        whole = {r["match_id"]: r for r in jsonl(body)}
        shown = whole[t0]
        hands = [" ".join(h) for d in shown["deals"] for h in d["hands"]]
        assert hands and len(str(shown["seed"])) == 64
        # what went out before held nothing of the sealed table: neither its seed nor a hand of it
        assert str(shown["seed"]).encode() not in early[0] + early[1]
        assert not any(h.encode() in early[0] for h in hands)
    finally:
        gate.set()
        site.close()


# ------------------------------------------------------------------ the CSV in a spreadsheet
FORMULAS = ["=HYPERLINK(\"http://evil\",\"x\")", "+1+1", "-2+3", "@SUM(A1:A2)", "\t=1", "\r=1"]


@pytest.mark.security
@pytest.mark.parametrize("name", FORMULAS)
def test_a_bot_name_that_starts_a_formula_is_written_inert(name: str) -> None:
    text = standings_csv([{"rank": 1, "bot": name, "played": 2, "wins": 1, "draws": 0, "losses": 1, "byes": 0,
                           "score": 1.0, "points_for": 100, "points_against": 580, "diff": -480,
                           "buchholz": None}])
    [row] = list(csv.DictReader(io.StringIO(text)))
    assert row["bot"] == "'" + name  # shown as text, the apostrophe the spreadsheet's own escape
    assert (row["diff"], row["score"], row["buchholz"]) == ("-480", "1", "")  # numbers stay numbers


@given(st.text(max_size=40))
def test_no_text_cell_starts_a_formula(text: str) -> None:
    cell = csv_cell(text)
    assert isinstance(cell, str) and not cell.startswith(("=", "+", "-", "@", "\t", "\r"))
    assert cell.removeprefix("'") == text or cell == text


def test_a_zip_written_a_file_at_a_time_holds_only_that_file() -> None:
    z = ZipStream()
    pieces = [z.add(f"m{i}.json", json.dumps({"i": i, "pad": "x" * 5000}).encode()) for i in range(3)]
    assert all(0 < len(p) < 5000 for p in pieces)  # each entry's bytes, compressed, no more
    files = unzipped(b"".join([*pieces, z.close()]))
    assert [(name, r["i"]) for name, r in files] == [("m0.json", 0), ("m1.json", 1), ("m2.json", 2)]


#: how long a place may take to come back once its reader hung up: the node notices at its next write
GIVEN_BACK_S = 10.0


@pytest.mark.reliability
def test_readers_who_leave_mid_file_give_their_place_back(site: Site) -> None:
    """Each download holds one of its address's places among the replays (past them, a 429); a reader
    who hangs up after the first bytes gives it back as soon as the node notices (well within a
    second on a quiet machine; GIVEN_BACK_S bounds it, for a loaded one: a place kept would never
    come back): three times as many such readers as places, one after the other, each gets one; then
    a whole download."""
    url = f"{site.url}/api/v1/tournaments/{TOURNAMENT}/records.zip"
    for _ in range(3 * site.limits.max_replays_per_address):
        deadline = time.monotonic() + GIVEN_BACK_S
        while True:
            try:
                with urllib.request.urlopen(url, timeout=30) as r:
                    assert r.read(64)[:2] == b"PK"
                break
            except urllib.error.HTTPError as e:
                assert e.code == 429 and time.monotonic() < deadline, "a place was not given back"
                time.sleep(0.05)
    deadline = time.monotonic() + GIVEN_BACK_S
    while (got := fetch(site, f"/api/v1/tournaments/{TOURNAMENT}/records.jsonl"))[0] == 429:
        assert time.monotonic() < deadline, "a place was not given back"
        time.sleep(0.05)
    assert got[0] == 200 and len(jsonl(got[2])) == 12
