"""A broken profile stops start-up with a message naming the file, the field and what is wrong."""
from __future__ import annotations

from pathlib import Path

import pytest

from inspect_app.profiles import PROFILE_FOLDER, ProfileError, load_profile, load_profiles

GOOD = (PROFILE_FOLDER / "longmeadow.toml").read_text(encoding="utf-8")


def _broken(old: str, new: str) -> str:
    """The shipped Longmeadow profile with one edit, as a clerk might make it."""
    assert GOOD.count(old) == 1, f"the edit must hit exactly one place: {old!r}"
    return GOOD.replace(old, new)


@pytest.fixture
def write_profile(tmp_path: Path):
    def write(text: str, name: str = "town.toml") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write


def _error_for(path: Path) -> str:
    with pytest.raises(ProfileError) as caught:
        load_profiles(path.parent)
    message = str(caught.value)
    assert str(path) in message
    assert "errors.pydantic.dev" not in message  # no library internals for the reader
    return message


def test_the_unedited_copy_loads(write_profile):
    path = write_profile(GOOD)
    assert load_profile(path).key == "longmeadow"


def test_missing_field(write_profile):
    path = write_profile(_broken('registry_of_deeds = "Hampden County Registry of Deeds"\n', ""))
    assert f"{path}: registry_of_deeds: required field is missing" in _error_for(path)


def test_missing_field_deep_in_a_checklist(write_profile):
    first_pre_bury_item = 'citation = "§380-12 A(3)(e)[5][e]"\nper = "structure"'
    path = write_profile(_broken(first_pre_bury_item, 'per = "structure"'))
    message = _error_for(path)
    assert "inspection_types[2].checklist[0].citation: required field is missing" in message


def test_wrong_type(write_profile):
    path = write_profile(_broken("[stabilization]\ndays = 7", '[stabilization]\ndays = "seven"'))
    message = _error_for(path)
    assert "stabilization.days:" in message
    assert "valid integer" in message and "'seven'" in message


def test_out_of_range_value(write_profile):
    path = write_profile(_broken("[advance_notice]\nhours = 24", "[advance_notice]\nhours = 0"))
    message = _error_for(path)
    assert "advance_notice.hours:" in message and "greater than or equal to 1" in message


def test_unknown_field(write_profile):
    path = write_profile(_broken('town = "Longmeadow"\n', 'town = "Longmeadow"\nstabilisation_days = 7\n'))
    assert f"{path}: stabilisation_days: unknown field" in _error_for(path)


def test_unknown_per_value(write_profile):
    path = write_profile(_broken('per = "area"', 'per = "portion"'))
    message = _error_for(path)
    assert "inspection_types[1].checklist[11].per:" in message and "'portion'" in message


def test_bad_timezone(write_profile):
    path = write_profile(_broken('timezone = "America/New_York"', 'timezone = "America/Springfield"'))
    message = _error_for(path)
    assert f"{path}: timezone: 'America/Springfield' is not an IANA time zone name" in message


def test_duplicate_inspection_type(write_profile):
    path = write_profile(_broken('key = "walk_through"', 'key = "final"'))
    message = _error_for(path)
    # A town may offer a subset of the types (issue 30), so a missing one is no error; a repeated one is.
    assert f"{path}: inspection_types: each inspection type is defined at most once" in message
    assert "defined more than once: final" in message


def test_duplicate_checklist_key(write_profile):
    path = write_profile(_broken('key = "control_effective"', 'key = "control_installed"'))
    message = _error_for(path)
    assert "inspection_types[1].checklist: checklist key used more than once: control_installed" in message


def test_duplicate_holiday(write_profile):
    path = write_profile(_broken("holidays = []", "holidays = [2026-08-14, 2026-08-14]"))
    assert f"{path}: holidays: holiday listed more than once: 2026-08-14" in _error_for(path)


def test_unknown_holiday_calendar(write_profile):
    path = write_profile(_broken('holiday_subdivision = "MA"', 'holiday_subdivision = "ZZ"'))
    assert "no holiday calendar for holiday_country 'US', holiday_subdivision 'ZZ'" in _error_for(path)


def test_advance_notice_names_only_inspection_types(write_profile):
    path = write_profile(_broken('inspection_types = ["initial", "pre_bury"', 'inspection_types = ["initial", "prebury"'))
    assert f"{path}: advance_notice.inspection_types[1]:" in _error_for(path)


def test_lapse_needs_its_extension_rule(write_profile):
    path = write_profile(_broken('kind = "start_within"', 'kind = "lapse_after"'))
    message = _error_for(path)
    assert f"{path}: permit_clock: kind 'lapse_after' needs both extension_years" in message


def test_start_within_takes_no_extension_numbers(write_profile):
    path = write_profile(_broken("years = 2\n", "years = 2\nextension_years = 1\n"))
    message = _error_for(path)
    assert f"{path}: permit_clock: extension_years and extension_request_days_before apply only" in message


def test_every_problem_is_reported_on_its_own_line(write_profile):
    text = _broken('timezone = "America/New_York"', 'timezone = "Mars/Olympus"')
    text = text.replace('authority_title = "DPW Director"\n', "")
    path = write_profile(text)
    lines = _error_for(path).splitlines()
    assert len(lines) == 2
    assert all(line.startswith(f"{path}: ") for line in lines)
    assert {line.split(": ")[1] for line in lines} == {"timezone", "authority_title"}


def test_broken_toml_names_the_line(write_profile):
    text = _broken('town = "Longmeadow"', 'town = "Longmeadow')
    line = text.splitlines().index('town = "Longmeadow') + 1
    path = write_profile(text)
    message = _error_for(path)
    assert f"{path}: line {line}, column" in message
    assert "TOML syntax error" in message


def test_two_files_claiming_the_same_key(write_profile):
    first = write_profile(GOOD, "a_longmeadow.toml")
    second = write_profile(_broken('town = "Longmeadow"', 'town = "East Longmeadow"'), "b_copy.toml")
    message = _error_for(second)
    assert f"{second}: key: 'longmeadow' is already claimed by {first}" in message


def test_a_folder_without_profiles(tmp_path):
    with pytest.raises(ProfileError, match="no \\*.toml profile files found"):
        load_profiles(tmp_path)


def test_a_file_that_is_not_text(write_profile):
    path = write_profile("")
    path.write_bytes(b"key = \"\xff\xfe\"\n")
    assert f"{path}: is not UTF-8 text" in _error_for(path)


def test_a_rule_written_as_a_bare_number(write_profile):
    text = _broken("[stabilization]\ndays = 7\n", "stabilization = 7\n[stabilization_rule]\ndays = 7\n")
    path = write_profile(text)
    message = _error_for(path)
    assert f"{path}: stabilization: should be a table of its own fields" in message
    assert f"{path}: stabilization_rule: unknown field" in message


def test_loading_leaves_the_broken_file_untouched(write_profile):
    text = _broken("[stabilization]\ndays = 7", "[stabilization]\ndays = -7")
    path = write_profile(text)
    _error_for(path)
    assert path.read_text(encoding="utf-8") == text


def test_a_policys_section_too_long_to_store_with_its_basis(write_profile):
    """Each obligation stores its section (200 characters); a policy's carries ", town policy" after it."""
    line = ('citation = "§380-14 E: satisfactory corrections within 30 days after the DPW Director\'s notice to '
            'correct a maintenance violation"')
    section = "§380-14 E " + "x" * 180  # the whole citation fits its 200 characters; with its basis it does not
    path = write_profile(_broken(line, f'basis = "policy"\ncitation = "{section}: 30 days"'))
    message = _error_for(path)
    assert "longer than 200 characters" in message and f"{section}, town policy" in message
    fits = write_profile(_broken(line, f'basis = "policy"\ncitation = "{section[:-13]}: 30 days"'), "fits.toml")
    assert load_profile(fits).cure_period.basis == "policy"


def test_a_town_whose_profile_leaves_out_its_completion_clauses_is_refused(write_profile):
    # Left out, they defaulted to Longmeadow's §380-18 and §380-14 D(4), cited on another town's certificate
    # refusals and O&M pages as its own.
    start, end = GOOD.index("[completion]"), GOOD.index("[[inspection_types]]")
    assert start < end
    message = _error_for(write_profile(GOOD[:start] + GOOD[end:]))
    assert "completion" in message
    without = GOOD.replace('easements_citation = "§380-14 D(4)"\n', "")
    assert without != GOOD
    assert "easements_citation" in _error_for(write_profile(without))


def test_a_copied_profile_that_keeps_another_towns_name_is_refused_naming_both_files(tmp_path):
    # The key changed, the town's name left: two towns named "Longmeadow", which the imports (a town by key or
    # name) and every page and document confused.
    extra = tmp_path / "more"
    extra.mkdir()
    path = extra / "easthampton.toml"
    path.write_text(GOOD.replace('key = "longmeadow"', 'key = "easthampton"', 1), encoding="utf-8")
    with pytest.raises(ProfileError) as caught:
        load_profiles(extra=extra)
    assert str(path) in str(caught.value) and "'Longmeadow' is already the name of the town of" in str(caught.value)
    assert "longmeadow.toml" in str(caught.value)
