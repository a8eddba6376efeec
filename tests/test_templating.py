"""Templates compiled once and kept in the instance folder (templating.CompiledTemplates, issue 18), the
status pill every list shows and the form that starts an inspection."""
from __future__ import annotations

import enum
import logging

from jinja2 import DictLoader, Environment

from inspect_app.templating import CompiledTemplates, pill


def _environment(instance_path, templates: dict[str, str]) -> Environment:
    """A process's template environment, as an app makes it: its own memory, the instance folder's files."""
    return Environment(loader=DictLoader(templates), bytecode_cache=CompiledTemplates(str(instance_path)))


def _kept(env: Environment, name: str) -> bool:
    source, filename, _ = env.loader.get_source(env, name)
    return env.bytecode_cache.get_bucket(env, name, filename, source).code is not None


def test_a_template_compiled_by_one_process_serves_the_next_and_an_edited_one_is_compiled_again(tmp_path):
    first = _environment(tmp_path, {"notice.html": "Stop-work order for {{ permit }}"})
    assert first.get_template("notice.html").render(permit="LM-2026-014") == "Stop-work order for LM-2026-014"
    assert (tmp_path / "compiled-templates").is_dir()

    later = _environment(tmp_path, {"notice.html": "Stop-work order for {{ permit }}"})
    assert _kept(later, "notice.html")
    assert later.get_template("notice.html").render(permit="SB-7") == "Stop-work order for SB-7"

    edited = _environment(tmp_path, {"notice.html": "Stop-work order lifted for {{ permit }}"})
    assert not _kept(edited, "notice.html")  # the kept code was compiled from other source: not used
    assert edited.get_template("notice.html").render(permit="SB-7") == "Stop-work order lifted for SB-7"


def test_a_folder_that_cannot_be_written_still_serves_the_page(tmp_path, caplog):
    (tmp_path / "compiled-templates").write_text("a file where the folder should be")
    with caplog.at_level(logging.WARNING, logger="inspect_app.templating"):
        env = _environment(tmp_path, {"notice.html": "Permit {{ permit }}"})
        assert env.get_template("notice.html").render(permit="LM-1") == "Permit LM-1"
    assert "compiled template not kept" in caplog.text


def test_the_app_keeps_its_pages_compiled_templates(app, client):
    assert client.get("/login").status_code == 200
    env = app.jinja_env
    assert isinstance(env.bytecode_cache, CompiledTemplates)
    assert _kept(env, "accounts/login.html")


def test_a_status_pill_reads_as_the_regulation_writes_the_status():
    """`pill` (a Jinja global): the dashboard, My day and the permit page show each status as a badge."""
    class Status(enum.Enum):
        FINAL = "final_submissions"

    assert pill("stop_work") == '<span class="pill pill-stop-work">Stop-work</span>'
    assert pill("Stop work") == pill("stop-work") == pill(" STOP_WORK ") == pill("stop_work")
    assert pill(Status.FINAL) == '<span class="pill pill-final-submissions">Final submissions</span>'
    assert pill("overdue") == '<span class="pill pill-overdue">Overdue</span>'
    assert pill("activity_ceased") == '<span class="pill pill-activity-ceased">Activity ceased</span>'
    assert pill('<b>"x"') == '<span class="pill pill-&lt;b&gt;&#34;x&#34;">&lt;b&gt;&#34;x&#34;</span>'


def test_a_start_form_starts_that_inspection_and_says_where_it_goes_offline(app, make):
    """`start_form` (a Jinja global): the permit page's and My day's Start buttons."""
    from flask import url_for

    from inspect_app.templating import start_form

    permit = make.permit()
    with app.test_request_context(f"/permits/{permit.id}"):
        html = str(start_form(permit, "pre_bury", 'Start: Pre-bury <"IS-1">'))
        assert f'action="{url_for("inspections.start", permit_id=permit.id)}"' in html
        offline = url_for("inspections.new", permit_id=permit.id, inspection_type="pre_bury")
        assert f'name="offline_page" value="{offline}"' in html
    assert '<input type="hidden" name="type" value="pre_bury">' in html
    assert 'data-start="pre_bury"' in html and ">Start: Pre-bury &lt;&#34;IS-1&#34;&gt;</button>" in html
    assert 'name="csrf_token" value="' in html and "data-geolocate" in html and "data-latitude" in html
