"""The shape of a town's rule profile: everything that differs between towns (SPEC *Rules are data*).

Profiles are TOML files beside this module, one per town. They are validated at start-up; a broken
profile stops the app with a message naming the file, the field and what is wrong.
"""
from __future__ import annotations

import datetime as dt
import zoneinfo
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from inspect_app import inspection_types, legal_holidays
from inspect_app.types import TOWN_TIMEZONE

# A citation is stored with each obligation (permit_obligations.citation, 200 characters).
CITATION_MAX = 200
INSPECTION_TYPE_KEYS = inspection_types.KEYS  # declared once, in the registry
# A field naming inspection types accepts the registry's keys, whichever the town offers.
InspectionTypeKey = Literal[INSPECTION_TYPE_KEYS]  # type: ignore[valid-type]
# What a document, page or email cites a town clause for. A purpose the town does not list is printed with
# no clause, so a document names only its own town's sections (issue 13: towns are data).
CitationPurpose = Literal[
    "report_contents", "final_storm", "final_certification", "pipe_video", "punch_list",
    "stop_work", "stop_work_final", "violation", "completion_waiver", "completion", "om_plan_submission", "as_built_submission",
    "final_report_submission", "registry_recording", "surety", "om_plan", "om_binding", "om_parties",
    "om_log", "om_schedule", "om_schedule_change", "om_certification", "notice_to_correct", "easements",
    "permittee_is_owner",
]



@lru_cache(maxsize=256)
def short_citation(text: str) -> str:
    """The section a profile's citation names, without its explanation ("§380-10 K: the project..."). An
    explanation that begins inside parentheses ("§7.5 (Entry: the Commission may enter...)") leaves them closed:
    "§7.5 (Entry)", not "§7.5 (Entry"."""
    short = text.split(": ", 1)[0].strip()
    return short + ")" * max(short.count("(") - short.count(")"), 0)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Rule(Strict):
    """A number the rules engine uses, with the citation it comes from."""

    citation: str = Field(min_length=1, max_length=CITATION_MAX)


class DaysRule(Rule):
    days: int = Field(ge=1, le=3650)


class TownChoice(Strict):
    """Where a rule rests: the town's `regulation`, or its `policy` where the regulation's text does not give
    the value (a document then says "town policy"); `enabled` switches a policy off without a code change."""

    basis: Literal["regulation", "policy"] = "regulation"
    enabled: bool = True

    @property
    def basis_words(self) -> str:
        """'town policy' or 'regulation': what a page or document says the rule rests on."""
        return "town policy" if self.basis == "policy" else "regulation"

    def cited(self, section: str) -> str:
        """`section` (a short citation) as pages, mail and documents give it: followed by "town policy" when that,
        not the regulation, is what the rule rests on."""
        return f"{section}, town policy" if self.basis == "policy" else section


class CureRule(TownChoice, DaysRule):
    """§380-14 E: corrections within `days` after the authority's notice to correct a maintenance violation;
    `remedy`, what the town's text lets it do when they are not made, as the notice says it (none: the notice
    names no remedy)."""

    remedy: str = Field(default="", max_length=CITATION_MAX)


class ProgramRule(TownChoice):
    """The town's own inspection program (§380-16 C(4)): the inspections before construction, before backfill
    and the walk-through the schedule tracks beside the CGP's. Where the town's text has no program, it is
    the town's policy and can be switched off; the CGP's inspections are owed regardless."""

    citation: str = Field(default="", max_length=CITATION_MAX)


class HoursRule(Rule):
    hours: int = Field(ge=1, le=720)


class MonthsRule(Rule):
    months: int = Field(ge=1, le=120)


class StabilizationRule(Rule):
    """Stabilization of a portion of the site where earth-disturbing activity has ceased: two duties.

    CGP 2022 Part 2.2.14.a.i: *initiate* immediately, no later than the end of the `initiate_work_days`-th
    work day after the activity ceased. CGP 2022 Part 2.2.14.a.ii: *complete* within `complete_days`
    calendar days after initiation (`complete_days_sensitive` for a site discharging to sensitive
    waters). `days`, when set, is the town's own limit counted from when the activity ceased
    (§380-11 C(3)(a): seven days); the stricter deadline prevails (§380-11 C(1)). `citation` cites the
    town's rule, or says that the town is silent.
    """

    days: int | None = Field(default=None, ge=1, le=365)
    initiate_work_days: int = Field(default=1, ge=1, le=30)
    # CGP 2022 Part 2.2.14.a.i applies where earth-disturbing activity has permanently ceased or the area
    # "will be temporarily inactive for 14 or more calendar days": work resumed sooner owed no initiation.
    inactive_days: int = Field(default=14, ge=1, le=365)
    initiate_citation: str = Field(default="CGP 2022 Part 2.2.14.a.i", min_length=1, max_length=CITATION_MAX)
    complete_days: int = Field(default=14, ge=1, le=365)
    complete_days_sensitive: int = Field(default=7, ge=1, le=365)
    complete_citation: str = Field(default="CGP 2022 Part 2.2.14.a.ii", min_length=1, max_length=CITATION_MAX)

    def completion_days(self, sensitive: bool) -> int:
        """Calendar days from initiation to completion under the federal rule."""
        return self.complete_days_sensitive if sensitive else self.complete_days


class AdvanceNotice(TownChoice, HoursRule):
    """§380-16 C(3): notice to the authority at least `hours` before each inspection of the listed types
    (the inspections the project design engineer conducts; not the CGP erosion-control inspections)."""

    inspection_types: tuple[InspectionTypeKey, ...] = ("initial", "pre_bury", "walk_through", "final", "periodic")

    def required_for(self, inspection_type: str, by_authority: bool = False) -> bool:
        """Whether an inspection of this type owes the notice: never one the authority makes itself (the notice
        is owed *to* the town, §380-16 C(3): "The project design engineer shall notify the DPW Director")."""
        return self.enabled and inspection_type in self.inspection_types and not by_authority


class OMCertificationRule(TownChoice, MonthsRule):
    """§380-14 C(2)(l): an annual certification of the work done over the *last* `months` months, so a
    period can be certified only once it has ended; it is due `certify_within_days` after that (the
    town's text sets no deadline: the number is the town's choice, kept here, and cited as its policy unless
    `certify_within_basis` says the town's text gives it)."""

    certify_within_days: int = Field(default=30, ge=0, le=365)
    certify_within_basis: Literal["regulation", "policy"] = "policy"

    def cited(self, section: str) -> str:
        """The rule's citation, and, where the days to file are the town's policy but the rule is not, those days
        said to be its policy (§380-14 C(2)(l) sets no filing deadline)."""
        cited = super().cited(section)
        if self.certify_within_days and self.certify_within_basis == "policy" and self.basis != "policy":
            cited += f"; {self.certify_within_days} days to file, town policy"
        return cited


class IntervalRule(TownChoice, MonthsRule):
    """An inspection of a completed project owed every `months` months from the certificate of completion
    (§380-14 A(3): "regular inspections", with no number in the text: the town's `policy`, said so)."""


class ReportingRule(Strict):
    """CGP 2022 Part 4.7.1: each inspection report completed within `report_hours` of the inspection;
    Part 5.4: a corrective action documented within `action_record_hours` of discovering the condition."""

    report_hours: int = Field(default=24, ge=1, le=720)
    report_citation: str = Field(default="CGP 2022 Part 4.7.1", min_length=1, max_length=CITATION_MAX)
    action_record_hours: int = Field(default=24, ge=1, le=720)
    action_record_citation: str = Field(default="CGP 2022 Part 5.4", min_length=1, max_length=CITATION_MAX)
    # Part 4.7.1 is about the inspections Part 4 requires (the erosion-control inspections); a town that
    # holds its own reports to the same deadline lists their types here.
    report_inspection_types: tuple[InspectionTypeKey, ...] = ("erosion_control",)


GATES = ("findings", "corrective_actions", "notices_to_correct", "stop_work", "stabilization",
         "easements_recorded", "npdes_notice_of_termination", "punch_list")


# The inspections a certificate of completion needs made, or waived with the reason it prints (§380-16 C(4)(a)-(e)):
# "pre_construction" is the erosion-control inspection before construction starts (C(4)(b)[1]), "pre_bury" one
# for each underground structure (C(4)(c)).
REQUIRED_INSPECTIONS = ("initial", "pre_construction", "pre_bury", "walk_through", "final")


class CompletionRule(Rule):
    """What must be closed before the certificate of completion (§380-18; Southborough §5.0, §9.6), each
    gate named when it refuses. `easements_citation` is the town's clause on recording the easements.
    `required_inspections`: each one never made blocks the certificate unless waived with its reason."""

    gates: tuple[Literal["findings", "corrective_actions", "notices_to_correct", "stop_work", "stabilization",
                         "easements_recorded", "npdes_notice_of_termination", "punch_list"], ...] = (
        *GATES[:6], "punch_list")
    # Required, as `citation` is: a town that left them out had Longmeadow's §380-18 and §380-14 D(4) cited as its own.
    easements_citation: str = Field(min_length=1, max_length=CITATION_MAX)
    required_inspections: tuple[Literal["initial", "pre_construction", "pre_bury", "walk_through", "final"], ...] = (
        REQUIRED_INSPECTIONS)
    # The final submissions the town's text asks for before the certificate (Longmeadow §380-18 A-C: the final O&M
    # plan recorded at the registry (§380-14 B), the as-built drawings, the final inspection report), and what the
    # certificate says of the as-built drawings' certification (§380-15).
    submissions: tuple[Literal["om_plan", "as_built", "final_report"], ...] = Field(
        default=("om_plan", "as_built", "final_report"), min_length=1)
    as_built_certification: str = Field(
        default="Certified by the project design engineer, a Massachusetts registered professional engineer",
        min_length=1, max_length=CITATION_MAX)
    # What the certificate states, in the town's words: "The <authority> certifies that <this>, upon receipt and
    # approval of the final submissions ...". {number}, {site} and {regulation} are the permit's and the town's.
    certificate_statement: str = Field(
        default="all work of permit {number} at {site} has been satisfactorily completed in conformance with the "
                "{regulation}", min_length=1, max_length=2 * CITATION_MAX)
    # What the engineer certifies on the final inspection's report, as the form first offers it, in the town's words.
    final_inspection_certification: str = Field(
        default=("I find the stormwater management system properly installed and functioning, and my engineering "
                 "stamp is on the final as-built drawing(s)."), min_length=1, max_length=2 * CITATION_MAX)


    @field_validator("certificate_statement")
    @classmethod
    def _statement_fills_in(cls, statement: str) -> str:
        try:
            statement.format(number="N", site="S", regulation="R")
        except (KeyError, IndexError, ValueError) as error:
            raise ValueError(f"only {{number}}, {{site}} and {{regulation}} may be filled in ({error!r})") from None
        return statement


class SuretyRule(Rule):
    """Releasing the surety (Longmeadow §380-17 B, Southborough §6.3): "If the project is phased, [the authority]
    may release part of the bond as each phase is completed in compliance with the permit but the bond may not
    be fully released until [it] has received the final inspection report ... and issued a certificate of
    completion." So a partial release is for one completed phase, made while the permit complies. The text
    gives no share to keep: `retained_percent` of the surety stays until the certificate as the town's policy
    (`retained_basis`), so that a "part" cannot be all of it but a cent."""

    retained_percent: float = Field(default=10, ge=0, lt=100)
    retained_basis: Literal["regulation", "policy"] = "policy"


class StormRule(Rule):
    """CGP 2022 Parts 4.2, 4.3: an inspection within 24 hours of a storm of `threshold_mm` or more of rain
    within 24 hours, on the 14-day schedule and for sensitive waters. `every_schedule`: the town also asks
    for it on the 7-day schedule (`every_schedule_citation` says where; Longmeadow §380-11 C(3)(f))."""

    threshold_mm: float = Field(gt=0, le=500)
    every_schedule: bool = False
    every_schedule_citation: str = Field(default="", max_length=CITATION_MAX)

    @model_validator(mode="after")
    def _every_schedule_cited(self) -> Self:
        if self.every_schedule and not self.every_schedule_citation.strip():
            raise ValueError("every_schedule needs every_schedule_citation: the town clause that asks for it")
        return self


class SnowmeltRule(Rule):
    """CGP 2022 Parts 4.2, 4.3: an inspection within 24 hours of the occurrence of a snowmelt discharge from
    a storm event that produced `threshold_mm` or more of snow within 24 hours, wherever storm inspections
    are owed. The clock runs from the discharge, not from the snowfall."""

    citation: str = Field(default="CGP 2022 Parts 4.2, 4.3: within 24 hours of a snowmelt discharge from a "
                                  "storm event producing 3.25 in (82.55 mm) or more of snow within 24 hours",
                          min_length=1, max_length=CITATION_MAX)
    threshold_mm: float = Field(default=82.55, gt=0, le=2000)


class FrozenRule(Rule):
    """CGP 2022 Part 4.4, frozen conditions: where runoff is unlikely because frozen conditions are likely to
    last `min_months` or more, inspections are suspended while construction is suspended (every disturbed
    area stabilized) or reduced to once a month while work goes on; the site documents the dates."""

    citation: str = Field(default="CGP 2022 Part 4.4: frozen conditions; inspections suspended while "
                                  "construction is suspended, or once a month while work goes on",
                          min_length=1, max_length=CITATION_MAX)
    min_months: int = Field(default=3, ge=1, le=12)


# The town requirements the engine can stop when the authority waives them: its own inspections and O&M
# duties. The CGP's (routine and storm inspections, reports, corrective actions, stabilization) are federal
# and no town can waive them (§380-8 A(1): a waiver must be "allowed by federal ... statutes and regulations").
WAIVABLE = ("pre_construction", "pre_bury", "walk_through", "om_certification", "cure")


class WaiverRule(Rule):
    """The authority may waive strict compliance with a requirement of its rules (Longmeadow §380-8,
    Southborough §6.2); `requirements` are those of the engine's obligations the town's rules set."""

    requirements: tuple[Literal["pre_construction", "pre_bury", "walk_through", "om_certification", "cure"],
                        ...] = WAIVABLE


class PermitClock(Rule):
    """When an unused permit stops being good.

    `start_within`: work must begin within `years` of issuance (Longmeadow §380-10 K).
    `lapse_after`: the permit lapses `years` after the decision unless significant work began, and
    an extension of `extension_years` must be asked for `extension_request_days_before` days ahead
    (Southborough §9.7).
    """

    kind: Literal["start_within", "lapse_after"]
    years: int = Field(ge=1, le=20)
    extension_years: int | None = Field(default=None, ge=1, le=10)
    extension_request_days_before: int | None = Field(default=None, ge=1, le=365)

    @model_validator(mode="after")
    def _extension_matches_kind(self) -> Self:
        extension = (self.extension_years, self.extension_request_days_before)
        # §9.7 (Southborough): a lapse comes with a one-year extension asked for 30 days ahead;
        # without both numbers the engine could not warn the permittee in time.
        if self.kind == "lapse_after" and None in extension:
            raise ValueError(
                "kind 'lapse_after' needs both extension_years and extension_request_days_before"
            )
        # §380-10 K (Longmeadow): an extension is at the DPW Director's discretion, with no fixed
        # length, so extension numbers here would be silently ignored.
        if self.kind == "start_within" and extension != (None, None):
            raise ValueError(
                "extension_years and extension_request_days_before apply only to kind 'lapse_after'"
            )
        return self


class ChecklistItem(Strict):
    key: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    text: str = Field(min_length=1)
    citation: str = Field(min_length=1, max_length=CITATION_MAX)
    # What the item is asked about: once per inspection, or once per control, disturbed area,
    # stormwater structure or pipe run of the permit.
    per: Literal["site", "control", "area", "structure", "pipe"] = "site"
    # A "no" to this item is a violation by itself: the report cannot be evaluated "in compliance"
    # (§380-16 C(4)(e)[1]-[2]: the final inspection's all-work-complete and pipe video).
    no_is_violation: bool = False
    # A "no" to this item on a final is the system found not to comply with the plan: where the town's final stops
    # work by itself (`failed_final_stops_work`), it brings the written notice and the stop-work order (§380-16
    # C(4)(e)[5]). A final failing on another item (an operational failure of a system built to plan, [4]) is
    # corrected by the permittee, with no order.
    no_stops_work: bool = False
    # A "no" to this item is a condition requiring corrective action: the key of one of the profile's
    # `corrective_conditions`. The report then needs the repair, the date first observed and a corrective
    # action (opened, or an open one linked) before it can be submitted (CGP 2022 Part 5.1).
    corrective_condition: str | None = Field(default=None, pattern=r"^[a-z][a-z0-9_]*$")


class CorrectiveCondition(Strict):
    """A condition that triggers a corrective action (CGP 2022 Part 5.1), in the permit's words. `routine` names
    the condition a fix is filed under instead when its work is routine maintenance (a control "beyond routine
    maintenance", CGP 2022 Part 5.1.1, is not one that needs routine maintenance)."""

    text: str = Field(min_length=1, max_length=300)
    citation: str = Field(min_length=1, max_length=CITATION_MAX)
    routine: str | None = Field(default=None, pattern=r"^[a-z][a-z0-9_]*$")


class DischargeRule(Strict):
    """Discharges observed at each point of discharge (outfall structures and the points named on the
    report), on the reports of `inspection_types`. A discharge with visible sediment is the condition
    `sediment_condition` (a key of the profile's `corrective_conditions`)."""

    inspection_types: tuple[InspectionTypeKey, ...] = ("erosion_control",)
    citation: str = Field(min_length=1, max_length=CITATION_MAX)
    sediment_condition: str = Field(pattern=r"^[a-z][a-z0-9_]*$")

    def asked_on(self, inspection_type: str) -> bool:
        return inspection_type in self.inspection_types


class Signer(Strict):
    """Who qualifies to sign a report of one inspection type: an account of `role` (the accounts policy
    decides who may fill the report in at all), holding a PE number where `pe` (§380-16 C(3): the project
    design engineer "must be a Registered professional engineer"; C(4)(f): the engineer's designated
    representative "will be a professional engineer"). `who` names the signer in the refusal message and
    `citation` the town's clause; empty, the inspection type's own citation is given."""

    role: Literal["inspector", "agent"]
    pe: bool = False
    who: str = Field(min_length=1)
    citation: str = Field(default="", max_length=CITATION_MAX)
    # An inspector must be assigned to the permit in this capacity (§380-16 C(3): "All other inspections shall be
    # conducted by the project design engineer", not by the erosion-control inspector of C(2)); none: any inspector
    # assigned to the permit.
    capacity: Literal["design_engineer", "erosion_control_inspector"] | None = None


# With no `signers` in the profile: anyone the accounts policy lets perform the inspection signs it.
ANY_SIGNER = (Signer(role="inspector", who="the inspector assigned to the permit"),
              Signer(role="agent", who="the town's agent"))


class InspectionType(Strict):
    key: InspectionTypeKey
    name: str = Field(min_length=1)
    when: str = Field(min_length=1)
    citation: str = Field(min_length=1, max_length=CITATION_MAX)
    checklist: tuple[ChecklistItem, ...] = Field(min_length=1)
    # Who may sign the report, by role of account, and whether each needs a PE number on the account
    # (§380-16 C(3), C(4)(c), (e), (f)).
    signers: tuple[Signer, ...] = Field(default=ANY_SIGNER, min_length=1)

    @field_validator("signers")
    @classmethod
    def _each_signer_role_once(cls, signers: tuple[Signer, ...]) -> tuple[Signer, ...]:
        repeated = _repeated(signer.role for signer in signers)
        if repeated:
            raise ValueError(f"signer role listed more than once: {', '.join(repeated)}")
        return signers

    def signer(self, role: str) -> Signer | None:
        """The profile's terms for a signer of `role`; None when that role does not sign this type."""
        return next((signer for signer in self.signers if signer.role == role), None)
    # The signer's statement: 40 CFR 122.22(d) word for word, as the CGP asks of its inspection reports (CGP 2022
    # Part 4.7.1, Appendix I.11.d); "town" adds the sentence naming the town's `inspection_program`.
    certification: Literal["town", "40 CFR 122.22(d)"] = "town"
    # The report says why it was made (the schedule in force and the trigger), the storms since the last
    # report, and who and when in full: the CGP's inspection report (CGP 2022 Part 4.7.1; issue 20).
    states_occasion: bool = False
    # Where the town's rules name the permittee's authorized signatory as a signer besides the inspector (the
    # CGP: a report signed per Appendix I.11 by the operator's authorized signatory), the report carries both.
    permittee_signs: bool = False
    # Set: an item of this report may be answered "not inspected: unsafe", with the reason, and is then not
    # counted as inspected (the clause that allows it). Unset: every item must be inspected.
    unsafe_citation: str | None = Field(default=None, min_length=1, max_length=CITATION_MAX)
    # How often the schedule owes it once the permit is completed: only for a type whose registry entry meets the
    # regular inspections of a completed project (inspection_types: "om_inspection").
    interval: IntervalRule | None = None

    @model_validator(mode="after")
    def _interval_only_after_completion(self) -> Self:
        if self.interval is not None and "om_inspection" not in inspection_types.spec(self.key).meets:
            raise ValueError("interval: only an inspection of a completed project's facilities is owed at an "
                             "interval; this type's obligations are the schedule's own")
        return self

    @field_validator("checklist")
    @classmethod
    def _checklist_keys_unique(cls, checklist: tuple[ChecklistItem, ...]) -> tuple[ChecklistItem, ...]:
        # Answers are stored under the item key: two items with one key would overwrite each other.
        repeated = _repeated(item.key for item in checklist)
        if repeated:
            raise ValueError(f"checklist key used more than once: {', '.join(repeated)}")
        return checklist


class Profile(Strict):
    key: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    town: str = Field(min_length=1)
    state: Literal["MA"]
    timezone: str = TOWN_TIMEZONE
    regulation: str = Field(min_length=1)
    authority_title: str = Field(min_length=1)
    authority_body: str = Field(min_length=1)
    registry_of_deeds: str = Field(min_length=1)
    stabilization: StabilizationRule
    advance_notice: AdvanceNotice
    storm: StormRule
    snowmelt: SnowmeltRule = SnowmeltRule()
    frozen: FrozenRule = FrozenRule()
    # None: the town's rules provide for no waiver (a town with the CGP alone: federal duties are not waivable).
    waivers: WaiverRule | None = None
    # None: the town's permits neither lapse nor must be started within a time (the CGP has no such clock).
    permit_clock: PermitClock | None = None
    om_certification: OMCertificationRule
    # None: the town's rules hold no surety (releases are then limited by the certificate alone).
    surety: SuretyRule | None = None
    # A town's file must give its own (profiles/__init__.py: Longmeadow's were cited as any town's); this default
    # serves a profile made in Python (the engine's tests).
    completion: CompletionRule = CompletionRule(citation="§380-18", easements_citation="§380-14 D(4)")
    reporting: ReportingRule = ReportingRule()
    # Whether a final inspection that finds the system not complying with the plan (a "no" to its item marked
    # `no_stops_work`) issues, by itself, the written notice of violation and a stop-work order (Longmeadow
    # §380-16 C(4)(e)[5]: "If the system does not comply with the Plan ... A stop-work order shall be issued").
    # False where the town's text says no such thing (Southborough, the CGP): the report, sent to the authority,
    # records the violations, and the authority's agent decides what order to issue.
    failed_final_stops_work: bool = False
    # What the signer certifies the inspection was performed under, in the report's statement.
    inspection_program: str = Field(default="the town's stormwater rules and regulations", min_length=1)
    # The town's clause for wording the documents use, by purpose ("report_contents", "final_storm",
    # "final_certification", ...); a purpose the town does not cite is printed without a clause.
    citations: dict[CitationPurpose, str] = Field(default_factory=dict)
    cure_period: CureRule
    program: ProgramRule = ProgramRule()
    # Who signs an amendment of the O&M plan's maintenance schedule: the roles of responsible party the
    # town names ("owner(s), persons with financial responsibility, and persons with operational
    # responsibility", Southborough §7.6, Changes to O&M Plans b); Longmeadow §380-14 F(2) adds "and
    # easement grantors").
    amendment_signers: tuple[Literal["owner", "financial", "operational", "easement_grantor"], ...] = Field(
        default=("owner", "financial", "operational"), min_length=1)
    # Business days skip weekends, the legal holidays of `holiday_country`/`holiday_subdivision` (the
    # `holidays` package; US-MA includes Patriots' Day) and the town's own `holidays` listed here.
    holiday_country: str = "US"
    holiday_subdivision: str | None = "MA"
    holidays: tuple[dt.date, ...] = ()
    # CGP 2022 Part 5.2 "close of the next business day": the hour the town's business day closes.
    close_of_business: dt.time = dt.time(17, 0)
    inspection_types: tuple[InspectionType, ...] = Field(min_length=1)
    # Conditions requiring corrective action (CGP 2022 Part 5.1), by key, which checklist items and
    # discharges name; and the discharge observations the reports ask for (None: none are asked).
    corrective_conditions: dict[str, CorrectiveCondition] = Field(default_factory=dict)
    discharges: DischargeRule | None = None

    @model_validator(mode="after")
    def _conditions_known(self) -> Self:
        named = [(f"{kind.key}.{item.key}", item.corrective_condition) for kind in self.inspection_types
                 for item in kind.checklist if item.corrective_condition]
        if self.discharges is not None:
            named.append(("discharges", self.discharges.sediment_condition))
        named += [(f"corrective_conditions.{key}.routine", c.routine) for key, c in self.corrective_conditions.items()
                  if c.routine]
        unknown = [f"{where}: {key!r}" for where, key in named if key not in self.corrective_conditions]
        if unknown:
            raise ValueError("corrective condition not defined in [corrective_conditions]: " + ", ".join(unknown))
        return self

    def condition(self, key: str) -> CorrectiveCondition:
        return self.corrective_conditions[key]

    def filed_under(self, condition: CorrectiveCondition, action_kind: str | None) -> CorrectiveCondition:
        """The condition a fix is filed under: its `routine` one when the work chosen is routine maintenance."""
        if condition.routine and action_kind == "routine_maintenance":
            return self.corrective_conditions[condition.routine]
        return condition

    @field_validator("timezone")
    @classmethod
    def _timezone_known(cls, name: str) -> str:
        try:
            zoneinfo.ZoneInfo(name)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"{name!r} is not an IANA time zone name such as 'America/New_York'") from None
        return name

    @model_validator(mode="after")
    def _policy_citations_fit(self) -> Self:
        """A section cited with "town policy" after it is stored with each obligation: it must fit there too."""
        cited = [self.om_certification.cited(short_citation(self.om_certification.citation)),
                 self.cure_period.cited(short_citation(self.cure_period.citation)),
                 *(self.program.cited(short_citation(kind.citation)) for kind in self.inspection_types)]
        too_long = [text for text in cited if len(text) > CITATION_MAX]
        if too_long:
            raise ValueError(f"the section of a citation, with its basis, is longer than {CITATION_MAX} characters: "
                             f"{too_long[0]!r}")
        return self

    @model_validator(mode="after")
    def _holiday_calendar_known(self) -> Self:
        try:
            legal_holidays.check_calendar(self.holiday_country, self.holiday_subdivision)
        except NotImplementedError as error:
            raise ValueError(f"no holiday calendar for holiday_country {self.holiday_country!r}, "
                             f"holiday_subdivision {self.holiday_subdivision!r}: {error}") from None
        return self

    @field_validator("holidays")
    @classmethod
    def _holidays_unique(cls, holidays: tuple[dt.date, ...]) -> tuple[dt.date, ...]:
        repeated = _repeated(day.isoformat() for day in holidays)
        if repeated:
            raise ValueError(f"holiday listed more than once: {', '.join(repeated)}")
        return holidays

    @field_validator("inspection_types")
    @classmethod
    def _each_inspection_type_once(cls, kinds: tuple[InspectionType, ...]) -> tuple[InspectionType, ...]:
        # A town offers the registry's types it defines, each once (§380-16 C(4)(a)-(f) are Longmeadow's six);
        # a type it does not define is not offered there.
        repeated = _repeated(kind.key for kind in kinds)
        if repeated:
            raise ValueError(f"each inspection type is defined at most once; defined more than once: "
                             f"{', '.join(repeated)}")
        return kinds

    @model_validator(mode="after")
    def _required_inspections_offered(self) -> Self:
        """An inspection type the certificate of completion requires must be one the town offers: otherwise it
        could never be made, and the certificate never issued."""
        missing = [key for key in self.completion.required_inspections
                   if key in INSPECTION_TYPE_KEYS and not self.offers(key)]
        if missing:
            raise ValueError(f"completion.required_inspections names {', '.join(missing)}, which the town does not "
                             "offer: define it in [[inspection_types]] or leave it out of the list")
        return self

    def offers(self, key: str) -> bool:
        """Whether the town offers inspections of the type `key` (its profile defines it)."""
        return any(kind.key == key for kind in self.inspection_types)

    def waivable(self) -> tuple[str, ...]:
        """The requirements the town's authority may waive (`waivers.requirements`), less the inspections of a
        type the town does not offer (never owed there, so nothing to waive)."""
        if self.waivers is None:
            return ()
        inspections = inspection_types.obligations_met()
        return tuple(requirement for requirement in self.waivers.requirements
                     if requirement not in inspections or self.offers(inspection_types.meeting(requirement)))

    def name_of(self, key: str) -> str:
        """The town's name for the inspection type `key`; for a type it does not offer (a record kept from before
        its profile dropped the type), the key in words."""
        if self.offers(key):
            return self.inspection_type(key).name
        return f"{key.replace('_', ' ').capitalize()} inspection"

    def cite(self, purpose: CitationPurpose) -> str:
        """The town's clause for `purpose` ("§380-18"), or "" where the town cites none."""
        return self.citations.get(purpose, "")

    def cited(self, label: str, purpose: CitationPurpose) -> str:
        """`label (clause)` with the town's own clause, or the label alone where the town cites none."""
        clause = self.cite(purpose)
        return f"{label} ({clause})" if clause else label

    def inspection_type(self, key: str) -> InspectionType:
        for kind in self.inspection_types:
            if kind.key == key:
                return kind
        raise KeyError(f"{self.town} has no inspection type {key!r}")


def _repeated(values: Iterable[str]) -> list[str]:
    """The values that occur more than once, in first-seen order."""
    return [value for value, count in Counter(values).items() if count > 1]
