// Create or edit a job with a form: its state, action (type and fields, headers, body, authentication),
// retry policy, error action, schedule (a recurrence, or a cron expression, with its DST policy), overlap
// policy and spread window, success expectation and missed-run policy, with a live preview of the next
// occurrences from the engine; the JSON as an advanced tab. Both tabs edit one document, which is PUT as it
// stands; a new job's name already taken is refused (that PUT would replace the job). The API validates it:
// its error is shown at the field (or, in the JSON tab, at the line) of the property it names. The JSON tab
// also lists every member the API would ignore (it ignores unknown members, as the old service did). Secrets
// left out of an edit are kept by the API.
import { ApiFailure, call, consoleBase, unknownMembers } from "./api.js";
import { announce, fill, h, show } from "./dom.js";
import { locate } from "./json-locate.js";
import { actionFields, retryFields } from "./form-action.js";
import { put } from "./form-fields.js";
import { expectFields } from "./form-expect.js";
import { overlapFields } from "./form-overlap.js";
import { schedulePreview, scheduleFields } from "./form-schedule.js";
import { zoned } from "./zones.js";

function template() {
  return { properties: { state: "Enabled",
    action: { type: "Http", request: { method: "POST", uri: "https://example.com/ping", body: "hello" } },
    recurrence: { frequency: "Week", interval: 1, schedule: { weekDays: ["Monday", "Friday"], hours: [9], minutes: [0] },
      timeZone: "Europe/London" } } };
}

function note(id, text, cls = "field-error") {
  return h("p", { id, class: cls, role: cls === "field-error" ? "alert" : null }, text);
}

function clearErrors() {
  document.getElementById("form-result")?.replaceChildren();
  for (const el of document.querySelectorAll(".field-error[data-api]")) el.remove();
  for (const el of document.querySelectorAll("[aria-invalid]")) {
    el.removeAttribute("aria-invalid");
    if (el.dataset.describedBy !== undefined) el.setAttribute("aria-describedby", el.dataset.describedBy);
  }
}

function markInvalid(input, message) {
  const id = `${input.id}-error`;
  const shown = note(id, message);
  shown.dataset.api = "true";
  (input.closest(".field") || input.parentElement).append(shown);
  input.dataset.describedBy = input.getAttribute("aria-describedby") || "";
  input.setAttribute("aria-invalid", "true");
  input.setAttribute("aria-describedby", `${id} ${input.dataset.describedBy}`.trim());
  input.focus();
}

// The form control that edits the property an API error names (the longest path that starts it).
function controlFor(path) {
  let best = null;
  for (const el of document.querySelectorAll("#form-panel [data-path]")) {
    const p = el.dataset.path;
    if ((path === p || path.startsWith(`${p}.`) || path.startsWith(`${p}[`)) && (!best || p.length > best.dataset.path.length)) best = el;
  }
  return best;
}

// The save message of a job whose end is already past (it is saved Completed and never runs); null otherwise.
function pastEnd(job) {
  const p = (job && job.properties) || {};
  const end = (p.recurrence || {}).endTime;
  if (!end || !(Date.parse(end) <= Date.now())) return null;
  return `Saved (state ${p.state || "Completed"}), but its end, ${zoned(end, (p.recurrence || {}).timeZone)}, is in `
    + "the past, so the job will never run. Set a later end, or none, to run it.";
}

export async function renderJobForm(ids, jobName) {
  const editing = jobName !== null;
  document.title = `${editing ? `Edit ${jobName}` : "New job"} · Scheduler console`;
  const heading = h("h1", {}, editing ? `Edit job ${jobName}` : `New job in ${ids.collection}`);
  const ctx = { doc: template(), editing, tab: "form" };
  if (editing) {
    try {
      const job = await call("GET", `${ids.path}/jobs/${encodeURIComponent(jobName)}`);
      const properties = { ...(job.properties || {}) };
      delete properties.status;
      ctx.doc = { properties };
    } catch (error) {
      show(heading, h("p", { class: "error", role: "alert" }, String(error)));
      return;
    }
  }
  const name = h("input", { id: "job-name", name: "name", required: true, value: jobName || "", readonly: editing,
    autocomplete: "off", spellcheck: "false" });
  const formPanel = h("div", { id: "form-panel", role: "tabpanel", "aria-labelledby": "tab-form" });
  const text = h("textarea", { id: "job-json", name: "definition", spellcheck: "false", rows: 24,
    "aria-describedby": "job-json-help" });
  const warnings = h("div", { id: "job-json-warnings", "aria-live": "polite" });
  const jsonPanel = h("div", { id: "json-panel", role: "tabpanel", "aria-labelledby": "tab-json", hidden: true },
    h("div", { class: "field" },
      h("label", { for: "job-json" }, "Definition (JSON, as the API's PUT takes it)"),
      h("p", { class: "muted", id: "job-json-help" }, "Secrets are write-only: leave them out when editing to keep the stored ones."),
      text),
    warnings);
  const preview = schedulePreview(ctx);

  let checking = null;
  const checkMembers = () => {
    clearTimeout(checking);
    checking = setTimeout(async () => {
      let body;
      try { body = JSON.parse(text.value); } catch { warnings.replaceChildren(); return; }
      const found = await unknownMembers("job", body).catch(() => []);
      warnings.replaceChildren(...(found.length ? [h("div", { class: "warnings", role: "status" },
        h("p", {}, `The API ignores ${found.length === 1 ? "this member" : "these members"}:`),
        h("ul", {}, found.map((u) => h("li", {}, u.message))))] : []));
    }, 300);
  };
  text.addEventListener("input", () => {
    try { ctx.doc = JSON.parse(text.value); ctx.previews(); } catch { /* shown on save or on leaving the tab */ }
    checkMembers();
  });

  ctx.changed = () => ctx.previews();
  ctx.rerender = (focusId) => {
    const errorAction = Boolean((ctx.doc.properties?.action || {}).errorAction);
    const toggle = h("input", { type: "checkbox", id: "error-action-on", checked: errorAction });
    toggle.dataset.path = "properties.action.errorAction";
    toggle.addEventListener("change", () => {
      put(ctx.doc, ["properties", "action", "errorAction"], toggle.checked
        ? { type: "Http", request: { method: "POST", uri: "" } } : undefined);
      ctx.rerender("error-action-on");
    });
    const state = h("select", { id: "job-state" }, ["Enabled", "Disabled"].map((s) => h("option", { value: s }, s)));
    state.dataset.path = "properties.state";
    state.value = /^disabled$/i.test(ctx.doc.properties?.state || "") ? "Disabled" : "Enabled";
    state.addEventListener("change", () => { put(ctx.doc, ["properties", "state"], state.value); ctx.changed(); });
    formPanel.replaceChildren(
      h("div", { class: "field" }, h("label", { for: "job-state" }, "State"), state),
      h("fieldset", { id: "action-set" }, h("legend", {}, "Action"), ...actionFields(ctx, ["properties", "action"], "action")),
      h("fieldset", { id: "error-set" }, h("legend", {}, "Error action"),
        h("label", {}, toggle, " When the action fails after its retries, run another action"),
        ...(errorAction ? actionFields(ctx, ["properties", "action", "errorAction"], "error", true) : [])),
      // The preview sits beside the schedule's fields (under them on a narrow screen), in sight while they change.
      h("fieldset", { id: "schedule-set" }, h("legend", {}, "Schedule"),
        h("div", { class: "schedule-grid" }, h("div", { class: "schedule-fields" }, ...scheduleFields(ctx)), preview)),
      h("fieldset", { id: "overlap-set" }, h("legend", {}, "Overlap and spread"), ...overlapFields(ctx)),
      h("fieldset", { id: "expect-set" }, h("legend", {}, "Expected success and missed runs"), ...expectFields(ctx)));
    if (focusId) document.getElementById(focusId)?.focus();
    ctx.previews();
  };

  const tabs = h("div", { class: "tabs", role: "tablist", "aria-label": "Edit as" });
  const select = (which) => {
    if (which === ctx.tab) return true;
    if (which === "form") {
      try {
        ctx.doc = JSON.parse(text.value);
      } catch (error) {
        clearErrors();
        markInvalid(text, `JSON: ${error.message}`);
        return false;
      }
      ctx.startWall = undefined;
      ctx.endWall = undefined;
      ctx.endKind = undefined;
      ctx.kind = undefined; // once, on a schedule or on cron: as the JSON says now
      ctx.rerender();
    } else {
      text.value = JSON.stringify(ctx.doc, null, 2);
      checkMembers();
      jsonPanel.append(preview); // the form's panel, where it was, is hidden now
    }
    ctx.tab = which;
    formPanel.hidden = which !== "form";
    jsonPanel.hidden = which !== "json";
    for (const b of tabs.children) b.setAttribute("aria-selected", String(b.dataset.tab === which));
    return true;
  };
  tabs.append(
    h("button", { type: "button", role: "tab", id: "tab-form", "data-tab": "form", "aria-selected": "true",
      "aria-controls": "form-panel", onclick: () => select("form") }, "Form"),
    h("button", { type: "button", role: "tab", id: "tab-json", "data-tab": "json", "aria-selected": "false",
      "aria-controls": "json-panel", onclick: () => select("json") }, "JSON (advanced)"));

  const save = async (event) => {
    event.preventDefault();
    clearErrors();
    const wanted = name.value.trim();
    if (!wanted) {
      markInvalid(name, "name: a job name is required.");
      return;
    }
    let body = ctx.doc;
    if (ctx.tab === "json") {
      try {
        body = JSON.parse(text.value);
      } catch (error) {
        markInvalid(text, `JSON: ${error.message}`);
        return;
      }
    }
    const jobPath = `${ids.path}/jobs/${encodeURIComponent(wanted)}`;
    try {
      // A new job's name already taken is refused, not replaced (PUT would overwrite it), as `scheduler jobs
      // create` refuses it; editing replaces on purpose.
      const taken = !editing && await call("GET", jobPath).then(() => true, (error) => {
        if (error.status === 404) return false;
        throw error;
      });
      if (taken) throw new ApiFailure(409, "Conflict", `name: a job '${wanted}' already exists in ${ids.collection}.`);
      const saved = await call("PUT", jobPath, { body });
      const ended = pastEnd(saved);
      if (ended) { // the API stores it Completed, as the old service did: say so before leaving the form
        const result = document.getElementById("form-result");
        fill(result, h("div", { class: "warnings", role: "alert", id: "save-warning", tabindex: "-1" },
          h("p", {}, ended), h("p", {}, h("a", { href: `${consoleBase()}${jobPath}` }, "Go to the job"))));
        result.firstChild.focus();
        announce(`Saved, and it will never run: ${ended}`);
        return;
      }
      announce("Saved.");
      location.href = `${consoleBase()}${jobPath}`;
    } catch (error) {
      const failure = error instanceof ApiFailure ? error : new ApiFailure(0, "Error", String(error));
      const message = `${failure.code}: ${failure.message}`;
      if (failure.path === "name" || (/job name|name is/i.test(failure.message) && !failure.path)) {
        markInvalid(name, message);
      } else if (ctx.tab === "json") {
        const where = failure.path ? locate(text.value, failure.path) : null;
        markInvalid(text, `${message}${where ? ` (line ${where.line})` : ""}`);
        if (where) text.setSelectionRange(where.start, where.end);
      } else {
        const control = failure.path ? controlFor(failure.path) : null;
        if (control && !control.closest("[hidden]")) {
          markInvalid(control, message);
        } else {
          const result = document.getElementById("form-result");
          result.replaceChildren(h("div", { class: "error", role: "alert", tabindex: "-1" }, message));
          result.firstChild.focus();
        }
      }
      announce("The API refused the job.");
    }
  };

  show(
    heading,
    h("form", { id: "job-form", onsubmit: save, novalidate: true },
      h("div", { class: "field" }, h("label", { for: "job-name" }, "Job name"), name),
      tabs, formPanel, jsonPanel, h("div", { id: "form-result" }),
      h("div", { class: "buttons" },
        h("button", { type: "submit", id: "save" }, editing ? "Save changes" : "Create job"),
        h("a", { class: "button secondary",
          href: `${consoleBase()}${ids.path}${editing ? `/jobs/${encodeURIComponent(jobName)}` : ""}` }, "Cancel"))),
  );
  ctx.rerender();
  (editing ? document.getElementById("action-type") : name).focus();
}
