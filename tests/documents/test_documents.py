"""The town's documents, read back as a person reads them: every required field with its value."""
from __future__ import annotations

import datetime as dt
import hashlib
import io
import re

from pypdf import PdfReader

from inspect_app.certifications.models import MaintenanceLogEntry, OMCertification, OMPlan, ResponsibleParty
from inspect_app.completion.models import CertificateOfCompletion, FinalSubmission
from inspect_app.documents import records, services
from inspect_app.documents.models import FrozenDocument
from inspect_app.accounts.models import User
from inspect_app.enforcement import services as enforcement
from inspect_app.enforcement.models import NoticeOfViolation, StopWorkOrder
from inspect_app.extensions import db
from inspect_app.inspections.models import CorrectiveAction, Finding, Inspection, PipeVideo, PunchListItem
from inspect_app.inspections import canonical
from inspect_app.permits import services as permits
from inspect_app.permits.models import StormwaterStructure
from tests.integrity.test_verify_page import _qr_codes

UTC = dt.UTC


def pages_text(pdf: bytes) -> list[str]:
    return [page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages]


def flat(text: str) -> str:
    """Runs of whitespace made single spaces, as a reader reads across line breaks."""
    return re.sub(r"\s+", " ", text)


def read(pdf: bytes) -> str:
    return flat(" ".join(pages_text(pdf)))


def assert_furniture(pdf: bytes, permit_number: str, town: str, sha: str) -> None:
    """Every page names the town and permit and says page x of y; the last carries the record's hash."""
    pages = pages_text(pdf)
    for number, text in enumerate(pages, 1):
        assert f"Permit {permit_number}" in text and town in text
        assert f"Page {number} of {len(pages)}" in text
    assert f"Record SHA-256: {sha}" in pages[-1]
    assert all("Record SHA-256" not in text for text in pages[:-1])


def inspection(permit, type_: str, at: dt.datetime, **fields) -> Inspection:
    made = Inspection(permit_id=permit.id, type=type_, status="draft", performed_at=at,
                      inspector_name="Design Engineer", inspector_credentials="P.E. (MA) No. 48213",
                      details=fields.pop("details", {}), **fields)
    db.session.add(made)
    db.session.commit()
    return made


# -- 1. inspection report ------------------------------------------------------------------------------

def test_inspection_report_prints_a_to_h_checklist_findings_photos_and_signature(report, site):
    pdf = services.inspection_report_pdf(report)
    text = read(pdf)
    for expected in (
        "Erosion control inspection report",
        # (a)-(h) of §380-16 C(4)(f)[1], each with its value
        "(a) Date and location Jun 10, 2026 10:15 AM EDT 535 Bliss Road, Longmeadow, MA (42.04312, -72.55251, device GPS)",
        "(b) Inspector's name and credentials Design Engineer, P.E. (MA) No. 48213; CPESC No. 7702",
        "(c) Type of inspection Erosion control inspection (§380-16 C(4)(b))",
        "(d) Date of last inspection Jun 3, 2026 9:00 AM EDT",
        "(e) Weather at the time Overcast, 61 °F (16.0 °C), wind 8 mph (13 km/h) from NW",
        "Station: Westover Air Reserve Base (72508), 9.8 mi (15.8 km) from the site",
        "Source: meteostat hourly (observations) Attribution: Meteostat, CC BY 4.0",
        "(f) Precipitation, previous 24 hours 0.45 in (11.4 mm): on-site rain gauge reading (overrides the station)",
        "Station: 0.42 in (10.7 mm) at the weather station, 23 of 24 hours reported",
        "(g) Evaluation Violations: Finding 1: Silt fence undermined for 40 ft; sediment on Bliss Road.",
        "(h) Steps to correct violations Re-trench the silt fence along the east line and sweep Bliss Road.",
        # §380-16 C(3) covers the engineer's inspections, not the CGP's erosion-control ones.
        "24-hour advance notice Not required for this type of inspection (§380-16 C(3))",
        "Stop-work order None in effect",
        # the checklist: item text from the town profile, its citation, answer and note
        "Erosion and sedimentation controls are in place as shown on the filed erosion and sediment control plan "
        "§380-16 C(4)(b)[1] Site No Silt fence down at the east line",
        "All storm drain inlets are protected and all newly constructed outlets are armored §380-11 C(3)(c) Site Yes",
        # the finding, its corrective action with the deadline in local time, its photo with caption and EXIF time
        "Finding 1: violation Description Silt fence undermined for 40 ft; sediment on Bliss Road.",
        "Location East property line Severity Major Citation §380-11 C(3)(d)",
        "Recorded by Design Engineer",  # the report's author, by name
        "Re-trench and backfill the silt fence Significant repair (within 7 calendar days) Site contractor "
        "Jun 10, 2026 10:15 AM EDT Jun 17, 2026 11:59 PM EDT",
        "Photo 1 (finding 1): Undermined silt fence, looking north Taken: Jun 10, 2026 10:21 AM EDT (EXIF)",
        "Photo 2: Construction entrance Taken: time not recorded",
        # signature block
        "I certify under penalty of law that this document and all attachments were prepared",
        "Design Engineer Jun 10, 2026 11:05 AM EDT P.E. (MA) No. 48213; CPESC No. 7702 Date signed",
    ):
        assert expected in text, expected
    assert_furniture(pdf, "SWP-2026-014", "Town of Longmeadow", report.record_sha256)
    # The display renditions and the drawn signature are embedded as images.
    images = [img for page in PdfReader(io.BytesIO(pdf)).pages for img in page.images]
    assert len(images) == 3


def test_a_draft_with_pending_weather_no_notice_under_stop_work_is_flagged(site, report):
    draft = inspection(site.permit, "periodic", dt.datetime(2026, 6, 20, 13, 30, tzinfo=UTC),
                       amends_id=report.id, under_stop_work=True, notice_given=False, weather_status="pending")
    text = read(services.inspection_report_pdf(draft))
    assert "DRAFT Periodic inspection report (amendment)" in text
    assert "DRAFT: this report has not been signed and submitted" in text
    assert (f"Amendment: this report corrects the report of the inspection made Jun 10, 2026 10:15 AM EDT, "
            f"submitted Jun 10, 2026 11:05 AM EDT (record SHA-256 {report.record_sha256})") in text
    assert "(e) Weather at the time Pending: the weather station had not reported" in text
    assert "(f) Precipitation, previous 24 hours Pending: no station or gauge reading yet." in text
    assert "(g) Evaluation Not yet evaluated" in text
    assert "(d) Date of last inspection None before this one" in text
    assert "24-hour advance notice FLAG: NOT GIVEN at least 24 hours before the inspection (§380-16 C(3))" in text
    assert "Stop-work order In effect when this inspection was made" in text
    assert "Not yet signed" in text
    # A draft has no sealed hash: the page carries the hash of its record as it stands.
    assert f"Record SHA-256: {canonical.record_hash(draft)}" in text


def test_walk_through_punch_list_and_final_pipe_videos_storm_and_certification(site, seal):
    permit = site.permit
    walk = inspection(permit, "walk_through", dt.datetime(2026, 9, 1, 14, 0, tzinfo=UTC), evaluation="compliant")
    db.session.add_all([PunchListItem(permit_id=permit.id, walk_through_id=walk.id, description="Loam and seed the basin slopes"),
                        PunchListItem(permit_id=permit.id, walk_through_id=walk.id, description="Remove the silt fence")])
    seal(walk, dt.datetime(2026, 9, 1, 15, 0, tzinfo=UTC))
    text = read(services.inspection_report_pdf(walk))
    assert "Punch list (§380-16 C(4)(d)) # Item of work remaining 1 Loam and seed the basin slopes 2 Remove the silt fence" in text

    pipe = db.session.scalar(db.select(StormwaterStructure).where(StormwaterStructure.permit_id == permit.id))
    final = inspection(permit, "final", dt.datetime(2026, 10, 5, 14, 0, tzinfo=UTC), evaluation="compliant",
                       details={"storm": {"date": "2026-09-28", "depth_mm": 19.05},
                                "certification": {"certified": True, "text": "Properly installed and functioning."}})
    db.session.add(PipeVideo(inspection_id=final.id, structure_id=pipe.id, recorded_on=dt.date(2026, 10, 2),
                             reference="CCTV log 2026-117"))
    for item in db.session.scalars(db.select(PunchListItem)):
        item.resolved_in_id, item.resolution = final.id, f"Done: {item.description.lower()}"
    seal(final, dt.datetime(2026, 10, 5, 15, 0, tzinfo=UTC))
    text = read(services.inspection_report_pdf(final))
    assert "Storm the system was seen in (§380-16 C(4)(e)[2]) Sep 28, 2026, 0.75 in (19.1 mm)" in text
    assert "Engineer's certification (§380-16 C(4)(e)[3]) Properly installed and functioning." in text
    assert "Loam and seed the basin slopes Done: loam and seed the basin slopes" in text
    assert "Pipe videos (§380-16 C(4)(e)[1]) Pipe run Recorded on Reference Video file 12-inch HDPE run P-1 Oct 2, 2026 CCTV log 2026-117" in text


def test_markup_in_user_text_prints_literally(site, make, seal):
    permit = site.permit
    draft = inspection(permit, "periodic", dt.datetime(2026, 6, 12, 14, 0, tzinfo=UTC), evaluation="violations")
    injected = '<font size=80>BIG</font> and <a href="x">link</a> & <b>bold'
    db.session.add(Finding(inspection_id=draft.id, permit_id=permit.id, description=injected, location="<i>east</i>",
                           is_violation=True))
    db.session.commit()
    make.photo(permit, inspection=draft, caption=injected)
    seal(draft, dt.datetime(2026, 6, 12, 15, 0, tzinfo=UTC))
    pdf = services.inspection_report_pdf(draft)
    text = read(pdf)
    assert f"Description {injected}" in text
    assert "Location <i>east</i>" in text
    assert f"Photo 1: {injected}" in text
    # No link was made, and no 80-point text was set.
    assert b"/URI" not in pdf and b"/Annots" not in pdf
    assert not re.search(rb"/F\d+ 80 Tf", pdf)


def test_forty_photos_paginate_with_every_caption(site, make, seal):
    permit = site.permit
    draft = inspection(permit, "periodic", dt.datetime(2026, 6, 15, 14, 0, tzinfo=UTC), evaluation="compliant")
    for n in range(40):
        make.photo(permit, inspection=draft, caption=f"Outlet apron view {n + 1:02d}",
                   taken_at=f"2026:06:15 10:{n:02d}:00", shade=n * 6)
    seal(draft, dt.datetime(2026, 6, 15, 15, 0, tzinfo=UTC))
    pdf = services.inspection_report_pdf(draft)
    pages = pages_text(pdf)
    text = flat(" ".join(pages))
    for n in range(40):
        assert f"Photo {n + 1}: Outlet apron view {n + 1:02d} Taken: Jun 15, 2026 10:{n:02d} AM EDT (EXIF)" in text
    # Six photos to a page at most: 40 photos take at least seven pages, and no photo is lost between them.
    assert len(pages) >= 8
    assert sum(len(page.images) for page in PdfReader(io.BytesIO(pdf)).pages) == 40
    assert_furniture(pdf, permit.number, "Town of Longmeadow", draft.record_sha256)


# -- 2. notice of violation and stop-work order ------------------------------------------------------------

def make_stop_work_order(site, make, issuer=None) -> StopWorkOrder:
    agent = issuer or make.user("agent", name="Town Agent")
    permit = site.permit
    failed = inspection(permit, "final", dt.datetime(2026, 10, 5, 14, 0, tzinfo=UTC), evaluation="violations",
                        created_by_id=issuer.id if issuer else None)  # the order its own failed final issued
    finding = Finding(inspection_id=failed.id, permit_id=permit.id, is_violation=True, severity="critical",
                      description="Infiltration system IS-1 ponds 48 hours after the storm",
                      location="Basin 1", citation="§380-16 C(4)(e)[4]",
                      created_at=dt.datetime(2026, 10, 5, 14, 30, tzinfo=UTC))
    db.session.add(finding)
    order = StopWorkOrder(permit_id=permit.id, reason="Final inspection failed: the system does not comply.",
                          inspection_id=failed.id, issued_by_id=agent.id,
                          issued_at=dt.datetime(2026, 10, 6, 13, 0, tzinfo=UTC), findings=[finding])
    db.session.add(order)
    db.session.flush()
    db.session.add(NoticeOfViolation(permit_id=permit.id, inspection_id=failed.id, stop_work_order_id=order.id,
                                     text="Rebuild the infiltration bed to the approved plan.", issued_by_id=agent.id,
                                     issued_at=dt.datetime(2026, 10, 6, 13, 0, tzinfo=UTC)))
    db.session.commit()
    return order


def test_notice_of_violation_and_stop_work_order(site, make):
    order = make_stop_work_order(site, make)
    pdf = services.stop_work_order_pdf(order)
    text = read(pdf)
    for expected in (
        "Notice of Violation and Stop-Work Order",
        "Issued by Town Agent, for the DPW Director",
        "Issued at Oct 6, 2026 9:00 AM EDT",
        "Inspection Final inspection, Oct 5, 2026 10:00 AM EDT",
        "Status of the order In effect",
        "Under §380-16 C(4)(e)[5] and §380-19 of the Town of Longmeadow Code Ch. 380",  # after the final
        "the DPW Director orders that all construction and land-disturbing activity at 535 Bliss Road",
        "Reasons Final inspection failed: the system does not comply.",
        "Oct 5, 2026 Infiltration system IS-1 ponds 48 hours after the storm Basin 1 Critical §380-16 C(4)(e)[4]",
        "Notice of violation Issued by Town Agent, for the DPW Director Issued at Oct 6, 2026 9:00 AM EDT",
        "Rebuild the infiltration bed to the approved plan.",
        "How to have the order lifted The order stands until every violation on the permit (those above, and any "
        "other still open) is corrected and all work previously completed has been approved by the DPW Director "
        "(§380-16 C(4)(e)[5])",
        "The order is lifted in writing once the corrections are verified and the work is approved;",
    ):
        assert expected in text, expected
    assert_furniture(pdf, "SWP-2026-014", "Town of Longmeadow", records.sha256_of(records.stop_work_record(order)))

    order.lifted_at, order.lifted_by_id = dt.datetime(2026, 10, 20, 18, 0, tzinfo=UTC), order.issued_by_id
    order.lift_reason = "Re-inspection found the work compliant."
    db.session.commit()
    assert ("Status of the order Lifted Oct 20, 2026 2:00 PM EDT by Town Agent: Re-inspection found the work compliant."
            in read(services.stop_work_order_pdf(order)))


def test_an_order_the_engineers_failed_final_inspection_issued_is_not_signed_for_the_authority(site, make):
    """A failed final inspection issues its order at once, by whoever made it: often the applicant's engineer.
    The PDF said "Issued by Erin Engineer, for the DPW Director" and signed it "For the DPW Director": an
    engineer signing for the town. It says the order follows from their inspection, and who lifts it."""
    engineer = make.user("inspector", name="Erin Engineer")
    text = read(services.stop_work_order_pdf(make_stop_work_order(site, make, issuer=engineer)))
    assert ("Issued by Erin Engineer, on the final inspection that found the system not complying "
            "(§380-16 C(4)(e)[5])") in text
    assert "Issued on the final inspection's finding" in text and "the DPW Director lifts it" in text
    assert "for the DPW Director" not in text and "For the DPW Director" not in text


def test_an_agents_order_stays_issued_for_the_authority_whatever_becomes_of_the_agents_account(site, make):
    """Told from the order's own facts (its inspection and who made it), not from the issuer's account as it is
    when the PDF is drawn again (at the acknowledgment, the lift, each notice)."""
    order = make_stop_work_order(site, make)
    db.session.get(User, order.issued_by_id).role = "inspector"
    db.session.commit()
    text = read(services.stop_work_order_pdf(order))
    assert "Issued by Town Agent, for the DPW Director" in text and "on the final inspection that found" not in text


# -- 3. certificate of completion ----------------------------------------------------------------------

def complete(permit, make, seal) -> CertificateOfCompletion:
    agent = make.user("agent", town=permit.jurisdiction.profile_key, name="Commission Agent")
    final = inspection(permit, "final", dt.datetime(2026, 10, 5, 14, 0, tzinfo=UTC), evaluation="compliant")
    seal(final, dt.datetime(2026, 10, 5, 15, 0, tzinfo=UTC))
    accepted = {"status": "accepted", "reviewed_by_id": agent.id, "submitted_at": dt.datetime(2026, 10, 7, 14, 0, tzinfo=UTC),
                "reviewed_at": dt.datetime(2026, 10, 9, 14, 0, tzinfo=UTC)}
    submitted = [
        FinalSubmission(permit_id=permit.id, kind="om_plan", registry_reference="Book 25170, Page 88", **accepted),
        FinalSubmission(permit_id=permit.id, kind="as_built", pe_certified=True, **accepted),
        FinalSubmission(permit_id=permit.id, kind="final_report", inspection_id=final.id, **accepted),
    ]
    asked = permits.profile_of(permit).completion.submissions  # those the town's regulation asks for
    db.session.add_all([s for s in submitted if s.kind in asked])
    if db.session.scalar(db.select(OMPlan).where(OMPlan.permit_id == permit.id)) is None:
        db.session.add(OMPlan(permit_id=permit.id, registry_reference="Book 25170, Page 88",
                              recorded_on=dt.date(2026, 10, 8)))
    permit.status, permit.completed_on = "completed", dt.date(2026, 10, 12)
    certificate = CertificateOfCompletion(permit_id=permit.id, issued_by_id=agent.id,
                                          issued_at=dt.datetime(2026, 10, 12, 15, 0, tzinfo=UTC))
    db.session.add(certificate)
    db.session.commit()
    return certificate


def test_certificate_of_completion_lists_accepted_submissions_with_the_towns_registry(make, seal):
    owner = make.user("permittee")
    permit = make.permit("southborough", owner=owner, number="SMP-2026-07", site_address="21 Highland Street, Southborough, MA")
    assert services.certificate_pdf(permit) is None  # nothing to print before it is issued
    certificate = complete(permit, make, seal)
    final = db.session.scalar(db.select(Inspection).where(Inspection.permit_id == permit.id))
    pdf = services.certificate_pdf(permit)
    text = read(pdf)
    for expected in (
        "Certificate of Completion",
        "Oct 12, 2026 Owner LLC 21 Highland Street, Southborough, MA Re: Permit SMP-2026-07",
        # §5.0: a COC "states that all conditions of an issued SMP have been met and that a project has been
        # completed in compliance with the conditions set forth in a SMP".
        "The Conservation Commission certifies that all conditions of Stormwater Management Permit SMP-2026-07 "
        "for 21 Highland Street, Southborough, MA have been met, and that the project has been completed in "
        "compliance with the conditions set forth in it (§5.0), upon receipt and approval of the final "
        "submissions it requires (§9.6",
        # Southborough's own clause (§9.6: as-built drawings "certified by a Registered Professional Engineer")
        # where it has one, none where it is silent; no final O&M plan (§7.6: filed with the application).
        "As-built drawings §9.6 Certified by a Registered Professional Engineer",
        "Final inspection report §6.3 Final inspection of Oct 5, 2026 10:00 AM EDT; "
        "record SHA-256",
        "Issued by the Conservation Commission under §9.6 of the Town of Southborough",
        "Completed on Oct 12, 2026",
        "Commission Agent Oct 12, 2026 11:00 AM EDT For the Conservation Commission, Town of Southborough",
    ):
        assert expected in text, expected
    assert "Final operation and maintenance plan" not in text and "project design engineer" not in text
    assert final.record_sha256 in text.replace(" ", "")  # a long hash wraps inside its cell
    assert_furniture(pdf, "SMP-2026-07", "Town of Southborough",
                     records.sha256_of(records.certificate_record(certificate)))


# -- each town's own clauses ---------------------------------------------------------------------------

def _order_certificate_and_certification(town: str, make, seal) -> list[bytes]:
    """A stop-work order, a certificate of completion and an O&M certification of one permit in `town`."""
    agent = make.user("agent", town=town, name="Town Agent")
    permit = make.permit(town, owner=make.user("permittee", town=town))
    order = StopWorkOrder(permit_id=permit.id, reason="Silt fence down at the east line.", issued_by_id=agent.id,
                          issued_at=dt.datetime(2026, 9, 6, 13, 0, tzinfo=UTC))
    db.session.add(order)
    db.session.commit()
    complete(permit, make, seal)
    db.session.add(ResponsibleParty(permit_id=permit.id, name="Owner LLC", role="owner", address="1 Main Street",
                                    starts_on=dt.date(2026, 10, 12)))
    certification = OMCertification(
        permit_id=permit.id, period_start=dt.date(2026, 10, 12), period_end=dt.date(2027, 10, 11),
        signer_name="Owner LLC", statement="I certify the system was operated and maintained.",
        submitted_at=dt.datetime(2027, 10, 15, 16, 0, tzinfo=UTC), status="submitted",
        contents={"as_of": "2027-10-11", "entry_ids": [], "missing": []})
    db.session.add(certification)
    db.session.commit()
    return [services.stop_work_order_pdf(order), services.certificate_pdf(permit),
            services.om_certification_pdf(certification)]


def test_documents_cite_only_their_own_towns_clauses(make, seal):
    """Issue 13: Longmeadow's section numbers must not appear in a Southborough or CGP-only document."""
    for town in ("cgp_baseline", "southborough"):
        order, certificate, certification = (read(pdf) for pdf in _order_certificate_and_certification(town, make, seal))
        for text in (order, certificate, certification):
            assert "§380" not in text
        assert "How to have the order lifted" in order and "Certificate of Completion" in certificate
    # §6.0 is Southborough's enforcement section; §5.0 only defines a stop work order.
    assert "Under §6.0 of the Town of Southborough" in order and "§5.0" not in order
    assert "Responsible parties (§7.6 d)(1)-(2))" in certification

    order, certificate, certification = (read(pdf) for pdf in _order_certificate_and_certification("longmeadow", make, seal))
    # An order after no final inspection is enforcement under §380-16 C(4)(f)[2], not the final's C(4)(e)[5].
    assert "Under §380-16 C(4)(f)[2] and §380-19 of the" in order and "C(4)(e)[5]" not in order
    assert "until then any further work on the site is a violation (§380-19)" in order
    assert "Final submissions accepted (§380-18)" in certificate
    assert "Final operation and maintenance plan §380-18 A; §380-14" in certificate
    assert "every 12 months (§380-14 C(2)(l))" in certificate
    for heading in ("Responsible parties (§380-14 C(2))", "Maintenance log, this period (§380-14 C(2)(j))",
                    "Scheduled tasks with no log entry (§380-14 C(2)(h))", "Responsible party (§380-14 C(2)(l))"):
        assert heading in certification, heading


# -- 4. annual O&M certification -----------------------------------------------------------------------

def make_certification(site, make, app) -> OMCertification:
    permit = site.permit
    agent = make.user("agent", name="Town Agent")
    permit.status, permit.completed_on = "completed", dt.date(2026, 10, 12)
    basin = db.session.scalar(db.select(StormwaterStructure).where(StormwaterStructure.permit_id == permit.id))
    db.session.add_all([
        OMPlan(permit_id=permit.id, registry_reference="Book 25170, Page 88", recorded_on=dt.date(2026, 10, 8)),
        ResponsibleParty(permit_id=permit.id, name="Maple Ridge Homes LLC", role="owner",
                         address="535 Bliss Road, Longmeadow, MA", starts_on=dt.date(2026, 10, 12)),
    ])
    entries = [
        MaintenanceLogEntry(permit_id=permit.id, structure_id=basin.id, kind="disposal", performed_on=dt.date(2027, 4, 14),
                            description="Removed sediment from the forebay", material_type="Sediment, 2 cubic yards",
                            disposal_location="Longmeadow DPW yard", performed_by="Site contractor"),
        MaintenanceLogEntry(permit_id=permit.id, kind="inspection", performed_on=dt.date(2027, 9, 2),
                            description="Inspected the outlet structure", performed_by="Owner"),
    ]
    db.session.add_all(entries)
    db.session.flush()
    certification = OMCertification(
        permit_id=permit.id, period_start=dt.date(2026, 10, 12), period_end=dt.date(2027, 10, 11),
        signer_name="Maple Ridge Homes LLC", statement="I certify that the stormwater management system was operated "
        "and maintained in accordance with its O&M plan.", submitted_at=dt.datetime(2027, 10, 5, 16, 0, tzinfo=UTC),
        status="accepted", reviewed_by_id=agent.id, reviewed_at=dt.datetime(2027, 10, 8, 14, 0, tzinfo=UTC),
        review_note="Log complete.",
        contents={"as_of": "2027-10-05", "entry_ids": [e.id for e in entries], "missing": [
            {"structure_id": basin.id, "structure": basin.name, "task": "Jet the pipe run", "interval_months": 6,
             "window_start": "2027-04-12", "window_end": "2027-10-11"}]},
    )
    db.session.add(certification)
    db.session.commit()
    return certification


def test_om_certification_lists_the_log_missing_tasks_signer_and_review(site, make, app):
    certification = make_certification(site, make, app)
    pdf = services.om_certification_pdf(certification)
    text = read(pdf)
    for expected in (
        "Annual Operation and Maintenance Certification",
        "O&M plan Recorded at the Hampden County Registry of Deeds, Book 25170, Page 88, on Oct 8, 2026",
        "Period certified Oct 12, 2026 to Oct 11, 2027 (log as of Oct 5, 2027)",
        "Status and review Accepted, Oct 8, 2027 10:00 AM EDT by Town Agent: Log complete.",
        "Owner Maple Ridge Homes LLC 535 Bliss Road, Longmeadow, MA Oct 12, 2026",
        "Apr 14, 2027 Disposal 12-inch HDPE run P-1 Removed sediment from the forebay Sediment, 2 cubic yards "
        "Longmeadow DPW yard Site contractor",
        "Sep 2, 2027 Inspection Site Inspected the outlet structure",
        "12-inch HDPE run P-1 Jet the pipe run 6 months Apr 12, 2027 to Oct 11, 2027",
        "I certify that the stormwater management system was operated and maintained in accordance with its O&M plan.",
        "Maple Ridge Homes LLC Oct 5, 2027 12:00 PM EDT Responsible party (§380-14 C(2)(l))",
    ):
        assert expected in text, expected
    assert_furniture(pdf, "SWP-2026-014", "Town of Longmeadow",
                     records.sha256_of(records.certification_record(certification)))


# -- 5. inspection history -----------------------------------------------------------------------------

def test_history_has_a_row_per_inspection_and_the_open_findings_and_actions(site, report, make):
    later = inspection(site.permit, "erosion_control", dt.datetime(2026, 6, 17, 14, 0, tzinfo=UTC),
                       weather_status="pending", notice_given=False)
    pdf = services.history_pdf(site.permit)
    text = read(pdf)
    # A draft is nobody's record but its author's until submitted: the history leaves it out.
    assert "Inspections (1)" in text
    assert ("Jun 10, 2026 10:15 AM EDT Erosion control inspection Design Engineer, P.E. (MA) No. 48213; CPESC No. 7702 "
            "Violations Submitted Overcast, 61 °F, 0.45 in (gauge)") in text
    assert "Jun 17, 2026" not in text.split("Open findings")[0] and "Draft" not in text
    assert "Open findings (1)" in text
    assert "1 Jun 10, 2026 Violation: Silt fence undermined for 40 ft; sediment on Bliss Road. East property line Major Open" in text
    assert ("Open corrective actions (1) Corrective action Kind Owner Deadline Status Re-trench and backfill the silt fence "
            "Significant repair (within 7 calendar days) Site contractor Jun 17, 2026 11:59 PM EDT Open") in text
    later.status, later.submitted_at = "submitted", later.performed_at
    db.session.commit()
    text = read(services.history_pdf(site.permit))
    assert "Inspections (2)" in text
    # §380-16 C(3): advance notice is for the engineer's inspections, so an erosion-control one is not flagged.
    assert ("Jun 17, 2026 10:00 AM EDT Erosion control inspection Design Engineer, P.E. (MA) No. 48213 — "
            "Submitted Pending") in text
    pdf = services.history_pdf(site.permit)
    assert_furniture(pdf, "SWP-2026-014", "Town of Longmeadow", records.sha256_of(records.history_record(site.permit)))

    # Correcting the finding and completing its action takes them off the open lists.
    db.session.scalar(db.select(Finding)).status = "corrected"
    db.session.scalar(db.select(CorrectiveAction)).completed_at = dt.datetime(2026, 6, 16, 14, 0, tzinfo=UTC)
    db.session.commit()
    text = read(services.history_pdf(site.permit))
    assert "Open findings (0)" in text and "Open corrective actions (0)" in text


# -- downloads -------------------------------------------------------------------------------------------

def document_urls(site, report, make, app, seal) -> list[str]:
    order = make_stop_work_order(site, make)
    certification = make_certification(site, make, app)
    complete(site.permit, make, seal)
    return [f"/documents/inspections/{report.id}.pdf", f"/documents/stop-work-orders/{order.id}.pdf",
            f"/documents/permits/{site.permit.id}/certificate.pdf",
            f"/documents/om-certifications/{certification.id}.pdf"]


def history_url(site) -> str:
    """Where the permit's history is made (a POST: it registers a document), then downloaded."""
    return f"/documents/permits/{site.permit.id}/history"


def test_downloads_are_attachments_and_the_same_record_gives_the_same_bytes(site, report, make, app, seal, signed_in):
    urls = document_urls(site, report, make, app, seal)
    owner = signed_in(site.owner)
    for url in urls:
        first, second = owner.get(url), owner.get(url)
        assert first.status_code == 200, url
        assert first.mimetype == "application/pdf"
        disposition = first.headers["Content-Disposition"]
        assert disposition.startswith("attachment; filename=") and disposition.endswith('.pdf')
        assert "SWP-2026-014" in disposition
        assert first.data.startswith(b"%PDF-") and first.data == second.data, url
    first, second = (owner.post(history_url(site), follow_redirects=True) for _ in range(2))
    assert first.headers["Content-Disposition"].startswith("attachment; filename=permit-history-SWP-2026-014")
    assert first.data.startswith(b"%PDF-") and first.data == second.data  # the record unchanged: one version
    report_pdf = owner.get(urls[0]).data
    assert f"Record SHA-256: {report.record_sha256}" in read(report_pdf)
    assert hashlib.sha256(report_pdf).digest() == hashlib.sha256(services.report_download_pdf(report)).digest()


def test_downloads_are_refused_to_others_and_to_the_signed_out(site, report, make, app, seal, signed_in, client):
    urls = document_urls(site, report, make, app, seal)
    for url in urls:
        response = client.get(url)
        assert response.status_code == 302 and "/login" in response.headers["Location"], url
    stranger = signed_in(make.user("permittee"))
    for url in urls:
        assert stranger.get(url).status_code == 404, url
    assert stranger.post(history_url(site)).status_code == 404
    other_town = signed_in(make.user("agent", town="southborough"))
    assert all(other_town.get(url).status_code == 404 for url in urls)
    assert other_town.post(history_url(site)).status_code == 404
    town_agent = signed_in(make.user("agent"))
    assert all(town_agent.get(url).status_code == 200 for url in urls)
    assert town_agent.post(history_url(site)).status_code == 303


def test_a_draft_report_is_not_the_permittees_to_download(site, signed_in, make):
    draft = inspection(site.permit, "erosion_control", dt.datetime(2026, 6, 17, 14, 0, tzinfo=UTC),
                       inspector_id=site.engineer.id, created_by_id=site.engineer.id)
    assert signed_in(site.owner).get(f"/documents/inspections/{draft.id}.pdf").status_code == 404
    # A draft is its author's alone: not the town's agent's, not another engineer's on the permit.
    assert signed_in(make.user("agent")).get(f"/documents/inspections/{draft.id}.pdf").status_code == 404
    colleague = make.user("inspector")
    permits.assign(None, site.permit, colleague, "design_engineer")
    db.session.commit()
    assert signed_in(colleague).get(f"/documents/inspections/{draft.id}.pdf").status_code == 404
    assert signed_in(site.engineer).get(f"/documents/inspections/{draft.id}.pdf").status_code == 200


def test_no_certificate_yet_is_404_and_unknown_ids_are_404(site, signed_in):
    owner = signed_in(site.owner)
    assert owner.get(f"/documents/permits/{site.permit.id}/certificate.pdf").status_code == 404
    assert owner.get("/documents/inspections/no-such-report.pdf").status_code == 404
    assert owner.get("/documents/om-certifications/no-such.pdf").status_code == 404


def test_the_permit_page_offers_each_document(site, report, make, app, seal, signed_in):
    urls = document_urls(site, report, make, app, seal)
    page = signed_in(site.owner).get(f"/permits/{site.permit.id}")
    assert page.status_code == 200
    section = page.text[page.text.index('id="documents"'):]
    for url in urls:
        assert f'href="{url}"' in section, url
    assert f'<form method="post" action="{history_url(site)}"' in section


def test_history_lists_every_order_and_every_missed_inspection_and_carries_its_id_and_qr_code(make, signed_in, app,
                                                                                            tmp_path):
    """The history names every stop-work order (lifted or standing) and every inspection missed (CGP 2022 Part 4.2:
    every 7 days from the start of construction), and can be checked like the signed documents: its document id
    and QR code open /verify, which finds it in the register."""
    app.config["PUBLIC_URL"] = "https://permits.longmeadow.example"
    agent = make.user("agent", name="Sam Okafor")
    permit = make.permit(number="SWP-2026-030", construction_started_on=dt.date(2026, 6, 2))
    make.inspection(permit, "erosion_control", performed_at=dt.datetime(2026, 6, 1, 14, 0, tzinfo=UTC))
    first = enforcement.issue_stop_work(agent, permit, "Sediment in Cooley Brook.")
    db.session.commit()
    first.findings  # noqa: B018 (loaded for the lift's check)
    enforcement.lift_stop_work(agent, first, "Silt fence rebuilt and approved on site.")
    db.session.commit()
    enforcement.issue_stop_work(agent, permit, "Basin outlet washed out.")
    db.session.commit()

    browser = signed_in(agent)
    made = browser.post(f"/documents/permits/{permit.id}/history")
    assert made.status_code == 303 and "/documents/frozen/" in made.headers["Location"]
    pdf = browser.get(made.headers["Location"]).data
    text = read(pdf)
    assert "Stop-work orders (2)" in text
    assert "Sam Okafor Sediment in Cooley Brook. §380-16 C(4)(f)[2] Lifted" in text
    assert "Silt fence rebuilt and approved on site." in text
    assert "Sam Okafor Basin outlet washed out. §380-16 C(4)(f)[2] In effect, not yet acknowledged" in text
    missed = text.split("Inspections missed (", 1)[1]
    count = int(missed.split(")", 1)[0])
    assert count >= 20 and text.count("Never made") == count  # June 2026 to now: none made after the start
    assert "Erosion control inspection CGP 2022 Part 4.2 Jun 9, 2026 11:59 PM EDT Never made" in text

    (document,) = db.session.scalars(db.select(FrozenDocument).where(FrozenDocument.kind == "permit_history")).all()
    assert f"Document {document.id}" in text and document.pdf_sha256 == hashlib.sha256(pdf).hexdigest()
    (code,) = _qr_codes(pdf, tmp_path)
    assert code == f"https://permits.longmeadow.example/verify/{document.id}?sha256={document.record_sha256}"
    page = flat(app.test_client().get(code.removeprefix("https://permits.longmeadow.example")).text)
    assert "This is a genuine document, issued by the Town of Longmeadow, Department of Public Works" in page
    assert "The record SHA-256 of the copy you scanned is the register's." in page

    again = browser.post(f"/documents/permits/{permit.id}/history", follow_redirects=True)
    assert again.data == pdf  # nothing changed: the same version
    make.inspection(permit, "erosion_control")  # the record changes: a new version, amending the first
    later = browser.post(f"/documents/permits/{permit.id}/history", follow_redirects=True).data
    versions = db.session.scalars(db.select(FrozenDocument).where(FrozenDocument.kind == "permit_history")
                                  .order_by(FrozenDocument.frozen_at)).all()
    assert later != pdf and len(versions) == 2 and versions[1].amends_id == document.id


def test_names_outside_windows_1252_print_as_written_on_the_order_and_the_report(app, make, weather_offline):
    # "Zoë O'Brien-Łukasz" printed as "Zoë O'Brien-?ukasz", "Đặng Thị Hương" as "?ang Thi Huong": the owner, the
    # inspector of (b), the signer and the page's "Made by" of legal documents.
    from factories import SignedIn
    from tests.inspections.report_helpers import start, submit

    owner = make.user("permittee", name="Zoë O'Brien-Łukasz")
    engineer = make.user("inspector", name="Đặng Thị Hương")
    agent = make.user("agent", name="Agent Avery")
    permit = make.permit(owner=owner, owner_name=owner.name, inspectors=[engineer],
                         construction_started_on=dt.date(2026, 6, 2))
    order = enforcement.issue_stop_work(agent, permit, "Sediment leaving the site.")
    db.session.commit()
    assert "Owner (permittee) Zoë O'Brien-Łukasz" in flat(read(services.stop_work_order_pdf(order)))
    browser = SignedIn(app.test_client(), engineer)
    report = start(browser, permit, "erosion_control")
    assert submit(browser, report).status_code == 303
    text = flat(read(services.report_download_pdf(db.session.get(Inspection, report.id))))
    assert "(b) Inspector's name and credentials Đặng Thị Hương" in text and "Made by Đặng Thị Hương" in text
