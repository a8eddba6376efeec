"""Every route of the URL map, for every kind of person, against records that person must not see.

Two towns, each with a permit (owner, engineer, agent), its records of every kind, and a colleague's
draft report on it. Nine identities (anonymous, two permittees, two engineers, two agents of different
towns, a town's admin, the admin of all towns) ask every route, GET and POST, filled with the ids of
records they may not see: another town's or another owner's, and the parts of a draft under a permit
they do see. Each answer must be 403 or 404 (anonymous: sent to sign in, or 401), and the database
must not change. Every page without ids, and every page about records they may see, is read by each of
them and must name nothing they may not see (no other town's records, nothing of anyone's draft).
The blob upload routes (`/sync/blobs/<sha>`, named by a file's SHA-256, not a record's id) are asked
by each of them about the stored files of records they may not see (another town's photo, anyone's draft
photo): 401/403/404 again, with no word of the file, and nothing added to the blob store.
The URL map is walked, so a route added later is covered without being listed here.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import io
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from pypdf import PdfReader
from sqlalchemy import select

from inspect_app.accounts import policy
from inspect_app.certifications.models import MaintenanceLogEntry, NoticeToCorrect, OMCertification
from inspect_app.completion.models import FinalSubmission
from inspect_app.enforcement.models import StopWorkOrder
from inspect_app.extensions import db
from inspect_app.findings import services as findings
from inspect_app.inspections.models import CorrectiveAction, PunchListItem
from inspect_app.inspections import services as inspections
from inspect_app.types import utcnow
from sync.models import SyncConflict, SyncOperation
from sync.services import create_device

import factories

# Routes whose arguments are no record of a permit: files of the app itself, and content-addressed blob
# uploads (walked on their own, with the SHA-256 of files), and the calendar feed whose secret key is
# itself the permission (a wrong key is tried below).
NOT_RECORDS = {"static"}
BLOB_ARGUMENT = "sha"
# Fixed words a route takes beside ids.
WORDS = {"kind": "display", "inspection_type": "erosion_control"}
# A submitted report's own PDF (a second or so to build) holds that report alone: read in tests/documents.
SLOW_PAGES = {"documents.inspection_report"}
# Which record kind an argument names.
ARGUMENTS = {
    "inspection_id": "inspection", "finding_id": "finding", "action_id": "action", "photo_id": "photo",
    "item_id": "punch", "order_id": "order", "certification_id": "certification", "cert_id": "certification",
    "entry_id": "log_entry", "notice_id": "notice", "submission_id": "submission", "structure_id": "structure",
    "area_id": "area", "assignment_id": "assignment", "conflict_id": "conflict", "device_id": "device",
    "op_id": "op", "user_id": "inspector", "key": "calendar_key",
}
# POSTs with no id act on the signed-in person's own things (sign in/out, push, a new calendar link,
# a new device token): they are tried by the tests of those features, not here.
OWN_POSTS = {"accounts.login", "accounts.logout", "sync.push", "sync.create_device", "dashboard.new_calendar_link",
             "permits.create"}


@dataclass
class Town:
    key: str
    people: dict = field(default_factory=dict)
    permit: object = None
    records: dict = field(default_factory=dict)   # kind -> (id, permit id)
    draft: dict = field(default_factory=dict)     # kind -> (id, permit id): a colleague's draft and its parts
    op: tuple = ()                                # (op id, permit id) of the engineer's sync operation
    words: list = field(default_factory=list)     # text that names this town's records
    blobs: list = field(default_factory=list)     # SHA-256 of the files of its submitted report's photo
    draft_blobs: list = field(default_factory=list)  # of its draft's photo


def _town(make, key: str) -> Town:
    town = Town(key)
    people = town.people
    people.update(permittee=make.user("permittee"), inspector=make.user("inspector"),
                  colleague=make.user("inspector"), agent=make.user("agent", town=key))
    permit = make.permit(key, owner=people["permittee"], inspectors=[people["inspector"], people["colleague"]],
                         areas=["Pad"], structures=["Basin"])
    town.permit = permit
    report = make.inspection(permit, inspector=people["inspector"], status="draft", latitude=permit.latitude,
                             longitude=permit.longitude)
    finding = make.finding(permit, report)
    # Files of different bytes (a blob is its bytes): each photo its own shade.
    photo = make.photo(permit, inspection=report, caption=f"Photo of {permit.number}", shade=2 * len(key))
    report.status, report.submitted_at = "submitted", report.performed_at
    action = _action(finding)
    draft = inspections.start_inspection(people["colleague"], permit, "erosion_control", fetch_weather=False)
    draft_finding = findings.add_finding(people["colleague"], draft, f"Draft finding {key}wren", severity="major")
    draft_action = findings.open_action(people["colleague"], draft_finding, "routine_maintenance",
                                        f"Draft action {key}wren", owner_id=people["permittee"].id)
    db.session.commit()
    draft_photo = make.photo(permit, inspection=draft, caption=f"Draft photo {key}wren", shade=2 * len(key) + 1)
    agent, inspector = people["agent"], people["inspector"]
    now = utcnow()
    rows = {
        "punch": PunchListItem(permit_id=permit.id, walk_through_id=report.id, description="Rake the swale"),
        "draft_punch": PunchListItem(permit_id=permit.id, walk_through_id=draft.id, description=f"Punch {key}wren"),
        "order": StopWorkOrder(permit_id=permit.id, reason="Sediment in the street", issued_by_id=agent.id),
        "certification": OMCertification(permit_id=permit.id, period_start=dt.date(2026, 1, 1),
                                          period_end=dt.date(2026, 12, 31), signer_name="Owner",
                                          statement="I certify the maintenance."),
        "log_entry": MaintenanceLogEntry(permit_id=permit.id, kind="inspection", performed_on=dt.date(2026, 6, 1),
                                         description="Basin cleaned", performed_by="Owner"),
        "notice": NoticeToCorrect(permit_id=permit.id, text="Clean the basin", issued_by_id=agent.id,
                                  cure_due_at=now + dt.timedelta(days=30)),
        "submission": FinalSubmission(permit_id=permit.id, kind="as_built"),
        "op": SyncOperation(op_id=str(uuid.uuid4()), arrival=1, kind="area.status", record_id=permit.areas[0].id,
                            device_time=now.isoformat(), user_id=inspector.id, status="conflict", result={},
                            payload={}),
    }
    db.session.add_all(rows.values())
    db.session.flush()
    rows["conflict"] = SyncConflict(entity="disturbed_areas", entity_id=permit.areas[0].id, permit_id=permit.id,
                                    server_version={}, device_version={}, op_id=rows["op"].op_id)
    db.session.add(rows["conflict"])
    device, _ = create_device(None, inspector, "tablet")
    inspector.calendar_key = uuid.uuid4().hex
    db.session.commit()
    here = permit.id
    town.records = {
        "permit": (here, here), "inspection": (report.id, here), "finding": (finding.id, here),
        "action": (action.id, here), "photo": (photo.id, here), "structure": (permit.structures[0].id, here),
        "area": (permit.areas[0].id, here), "assignment": (permit.assignments[0].id, here),
        "device": (device.id, here), "inspector": (inspector.id, here),
        **{kind: (row.id, here) for kind, row in rows.items() if kind not in ("draft_punch", "op")},
    }
    town.op = (rows["op"].op_id, here)  # a sync operation's answer is its sender's alone
    town.draft = {"inspection": (draft.id, here), "finding": (draft_finding.id, here),
                  "action": (draft_action.id, here), "photo": (draft_photo.id, here),
                  "punch": (rows["draft_punch"].id, here)}
    town.words = [permit.number, report.id, finding.id, action.id, photo.id]
    town.blobs = _files(photo)
    town.draft_blobs = _files(draft_photo)
    return town


def _files(photo) -> list[str]:
    shas = [photo.original_sha256, photo.display_sha256, photo.thumb_sha256, photo.print_sha256]
    return [sha for sha in shas if sha]


def _action(finding) -> CorrectiveAction:
    now = utcnow()
    action = CorrectiveAction(finding_id=finding.id, permit_id=finding.permit_id, kind="significant_repair",
                              description="Re-trench", owner_name="GC", discovered_at=now,
                              due_at=now + dt.timedelta(days=7))
    db.session.add(action)
    return action


def _text(response) -> str:
    """What a person reads in an answer: its text, a PDF's words; nothing of an image."""
    if response.mimetype == "application/pdf":
        return " ".join(page.extract_text() for page in PdfReader(io.BytesIO(response.data)).pages)
    if response.mimetype.startswith("text/") or "json" in response.mimetype:
        return response.get_data(as_text=True)
    return ""


def _digest(app) -> str:
    """A hash of every row of every table and every file of the blob store: equal before and after means
    nothing changed."""
    digest = hashlib.sha256()
    for path in sorted(Path(app.config["BLOB_ROOT"]).rglob("*")):
        digest.update(f"{path} {path.stat().st_size}".encode())
    with db.engine.connect() as connection:
        for table in db.metadata.sorted_tables:
            rows = connection.execute(select(table)).all()
            for row in sorted(repr(tuple(row)) for row in rows):
                digest.update(row.encode())
    return digest.hexdigest()


def _urls(rule, identity: str, forbidden: list[tuple[str, str, str]], visible_permits: list[str]) -> list[str]:
    """The rule filled with records `identity` may not see; with a permit of theirs as the parent too."""
    arguments = set(rule.arguments)
    fill = {name: WORDS[name] for name in arguments & set(WORDS)}
    ids = arguments - set(WORDS)
    if ids == {"key"}:
        return [rule.build({**fill, "key": uuid.uuid4().hex})[1]]
    child = next((name for name in sorted(ids) if name != "permit_id"), None)
    urls = []
    for kind, record_id, permit_id in forbidden:
        if child is None and kind == "permit":
            urls.append(rule.build({**fill, "permit_id": record_id})[1])
        elif child is not None and ARGUMENTS.get(child) == kind:
            parents = [permit_id] + visible_permits[:1] if "permit_id" in ids else [None]
            for parent in dict.fromkeys(parents):
                values = {**fill, child: record_id, **({"permit_id": parent} if parent else {})}
                urls.append(rule.build(values)[1])
    return urls


def test_nobody_reaches_what_they_may_not_see_on_any_route(app, make):
    towns = [_town(make, "longmeadow"), _town(make, "southborough")]
    lm, sb = towns
    identities = {
        "anonymous": None,
        "permittee A": lm.people["permittee"], "permittee B": sb.people["permittee"],
        "inspector A": lm.people["inspector"], "inspector B": sb.people["inspector"],
        "agent A": lm.people["agent"], "agent B": sb.people["agent"],
        "town admin": make.user("admin", town="longmeadow"), "admin of all towns": make.user("admin", town=None),
    }
    browsers = {name: factories.SignedIn(app.test_client(), user) for name, user in identities.items()}
    rules = [r for r in app.url_map.iter_rules() if r.endpoint not in NOT_RECORDS
             and BLOB_ARGUMENT not in r.arguments]
    blob_rules = [r for r in app.url_map.iter_rules() if BLOB_ARGUMENT in r.arguments]
    with_ids = [r for r in rules if r.arguments - set(WORDS)]
    lists = [r for r in rules if not r.arguments - set(WORDS) and "GET" in r.methods]
    drafts = [w for t in towns for w in (f"{t.key}wren",) + tuple(i for i, _ in t.draft.values())]
    before = _digest(app)
    tried, opened, leaked, blob_tries = 0, [], [], [0]
    for name, user in identities.items():
        browser = browsers[name]
        seen = {t.permit.id for t in towns if user is not None and policy.sees(user, t.permit)}
        forbidden = [(kind, record_id, permit_id) for t in towns if t.permit.id not in seen
                     for kind, (record_id, permit_id) in t.records.items()]
        forbidden += [(kind, record_id, permit_id) for t in towns for kind, (record_id, permit_id) in t.draft.items()]
        forbidden += [("op", *t.op) for t in towns if user is not t.people["inspector"]]
        refused = {401, 302, 403, 404} if user is None else {403, 404}
        for rule in with_ids:
            for url in _urls(rule, name, forbidden, sorted(seen)):
                for method in sorted(rule.methods & {"GET", "POST"}):
                    response = browser.get(url) if method == "GET" else browser.post(url, {})
                    response.close()
                    tried += 1
                    if response.status_code not in refused or (
                            response.status_code == 302 and "/login" not in response.location):
                        opened.append((name, method, url, response.status_code))
        # The files of records they may not see: as for no file at all (no size, not "complete").
        files = [sha for t in towns if t.permit.id not in seen for sha in t.blobs]
        files += [sha for t in towns for sha in t.draft_blobs]
        blob_refused = {401} if user is None else {404} if user.role != "admin" else {403}
        for rule in blob_rules:
            for sha in files:
                url = rule.build({BLOB_ARGUMENT: sha})[1]
                for method in sorted(rule.methods & {"GET", "HEAD", "PUT", "POST"}):
                    response = browser.client.open(
                        url, method=method, data=b"\xff\xd8\xff" if method == "PUT" else None,
                        json={"content_type": "image/jpeg"} if method == "POST" else None,
                        headers={"X-CSRFToken": browser.token, "Upload-Offset": "0"})
                    response.close()
                    tried += 1
                    blob_tries[0] += 1
                    body = response.get_data(as_text=True)
                    if response.status_code not in blob_refused or '"received"' in body or "complete" in body:
                        opened.append((name, method, url, response.status_code))
        hidden = drafts + [w for t in towns if t.permit.id not in seen for w in t.words]
        # Every page they may open, about their own permits' records: nothing of what is hidden on it.
        mine = [(kind, record_id, permit_id) for t in towns if t.permit.id in seen
                for kind, (record_id, permit_id) in t.records.items()]
        pages = [url for rule in with_ids if "GET" in rule.methods and rule.endpoint not in SLOW_PAGES
                 for url in _urls(rule, name, mine, [])]
        for url in pages + [rule.build({name: WORDS[name] for name in rule.arguments})[1] for rule in lists]:
            response = browser.get(url)
            tried += 1
            text = _text(response)
            response.close()
            found = [w for w in hidden if w in text]
            if response.status_code >= 500 or found:
                leaked.append((name, url, response.status_code, found))
    print(f"walk: {len(with_ids)} routes with ids and {len(lists)} without, {len(identities)} identities, "
          f"{tried} requests, of which {blob_tries[0]} to {len(blob_rules)} blob routes")
    assert len(blob_rules) == 3 and blob_tries[0] > 0
    assert opened == []
    assert leaked == []
    assert _digest(app) == before
    assert tried > len(identities) * (len(with_ids) + len(lists))
