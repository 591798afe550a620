// Create or edit a job from JSON. The document is PUT as written; the API validates it, and its error is
// shown under the editor naming the property and its line, with that property selected in the editor
// (or next to the name field when the name is at fault). Secrets left out of an edit are kept by the API.
import { ApiFailure, call, consoleBase } from "./api.js";
import { announce, h, show } from "./dom.js";

function template() {
  const start = new Date(Date.now() + 60_000);
  start.setUTCSeconds(0, 0);
  return { properties: { startTime: start.toISOString().replace(".000Z", "Z"),
    action: { type: "Http", request: { uri: "https://example.com/ping", method: "POST", body: "hello" },
      retryPolicy: { retryType: "Fixed", retryInterval: "PT30S", retryCount: 3 } },
    recurrence: { frequency: "Week", interval: 1, schedule: { weekDays: ["Monday", "Friday"], hours: [9], minutes: [0] },
      timeZone: "Europe/London" },
    state: "Enabled" } };
}

// Where a property path ("properties.recurrence.schedule.hours[2]") is written in the JSON text:
// each key is searched for after the previous one; an index moves on that many array items.
export function locate(text, path) {
  let at = 0;
  let found = null;
  for (const part of path.split(".")) {
    const m = /^([^[\]]+)((?:\[\d+\])*)$/.exec(part);
    if (!m) break;
    const key = new RegExp(`"${m[1].replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}"\\s*:`, "i");
    const hit = key.exec(text.slice(at));
    if (!hit) break;
    found = { start: at + hit.index, end: at + hit.index + hit[0].length - 1 };
    at = found.end;
  }
  if (!found) return null;
  const line = text.slice(0, found.start).split("\n").length;
  return { ...found, line };
}

function fieldError(input, message, place) {
  const id = `${input.id}-error`;
  let note = document.getElementById(id);
  if (!note) {
    note = h("p", { id, class: "field-error", role: "alert" });
    place.after(note);
  }
  note.textContent = message;
  input.setAttribute("aria-invalid", "true");
  input.setAttribute("aria-describedby", id);
}

function clearErrors() {
  for (const el of document.querySelectorAll(".field-error")) el.remove();
  for (const el of document.querySelectorAll("[aria-invalid]")) {
    el.removeAttribute("aria-invalid");
    el.removeAttribute("aria-describedby");
  }
}

export async function renderEditor(ids, jobName) {
  const editing = jobName !== null;
  document.title = `${editing ? `Edit ${jobName}` : "New job"} · Scheduler console`;
  const heading = h("h1", {}, editing ? `Edit job ${jobName}` : `New job in ${ids.collection}`);
  let document_ = template();
  if (editing) {
    try {
      const job = await call("GET", `${ids.path}/jobs/${encodeURIComponent(jobName)}`);
      const properties = { ...(job.properties || {}) };
      delete properties.status;
      document_ = { properties };
    } catch (error) {
      show(heading, h("p", { class: "error", role: "alert" }, String(error)));
      return;
    }
  }
  const name = h("input", { id: "job-name", name: "name", required: true, value: jobName || "", readonly: editing,
    autocomplete: "off", spellcheck: "false" });
  const text = h("textarea", { id: "job-json", name: "definition", spellcheck: "false", rows: 24 });
  text.value = JSON.stringify(document_, null, 2);
  const save = async (event) => {
    event.preventDefault();
    clearErrors();
    const wanted = name.value.trim();
    if (!wanted) {
      fieldError(name, "name: a job name is required.", name);
      name.focus();
      return;
    }
    let body;
    try {
      body = JSON.parse(text.value);
    } catch (error) {
      fieldError(text, `JSON: ${error.message}`, text);
      text.focus();
      return;
    }
    const jobPath = `${ids.path}/jobs/${encodeURIComponent(wanted)}`;
    try {
      await call("PUT", jobPath, { body });
      announce("Saved.");
      location.href = `${consoleBase()}${jobPath}`;
    } catch (error) {
      const failure = error instanceof ApiFailure ? error : new ApiFailure(0, "Error", String(error));
      const where = failure.path && failure.path !== "name" ? locate(text.value, failure.path) : null;
      if (failure.path === "name" || /job name|name is/i.test(failure.message) && !failure.path) {
        fieldError(name, `${failure.code}: ${failure.message}`, name);
        name.focus();
      } else {
        fieldError(text, `${failure.code}: ${failure.message}${where ? ` (line ${where.line})` : ""}`, text);
        text.focus();
        if (where) text.setSelectionRange(where.start, where.end);
      }
      announce("The API refused the job.");
    }
  };
  show(
    heading,
    h("form", { id: "job-form", onsubmit: save, novalidate: true },
      h("div", { class: "field" }, h("label", { for: "job-name" }, "Job name"), name),
      h("div", { class: "field" },
        h("label", { for: "job-json" }, "Definition (JSON, as the API's PUT takes it)"),
        h("p", { class: "muted", id: "job-json-help" },
          "Secrets are write-only: leave them out when editing to keep the stored ones."),
        text),
      h("div", { class: "buttons" },
        h("button", { type: "submit", id: "save" }, editing ? "Save changes" : "Create job"),
        h("a", { class: "button secondary",
          href: `${consoleBase()}${ids.path}${editing ? `/jobs/${encodeURIComponent(jobName)}` : ""}` }, "Cancel"))),
  );
  text.setAttribute("aria-describedby", "job-json-help");
  (editing ? text : name).focus();
}
