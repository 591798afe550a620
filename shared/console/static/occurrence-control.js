// Control over single occurrences on the occurrences page (newer api-version; docs/decisions.md, "Occurrence
// control"): skip or move one previewed occurrence, add an extra run, and the job's exceptions, each with Cancel.
// Every change is one PATCH of the job's whole list (`{"properties": {"exceptions": [...]}}`) made from the list
// read just before it, so an exception another client wrote since the page was shown is kept. The API checks the
// list (a Skip or a Move names an occurrence of the job, else its 400 names the nearest ones); its refusal is
// shown as the console shows every API error, and the page is read again after a change.
import { call } from "./api.js";
import { announce, failure, fill, h, table } from "./dom.js";
import { readInstant, utcToZoned, zoned } from "./zones.js";

// Notes of the preview on instants an exception put there: the way to change them is the exception's Cancel.
const PUT_THERE = new Set(["moved", "extra"]);
const KINDS = {
  skip: { type: "Skip", title: "Skip the occurrence at", verb: "Skip it" },
  move: { type: "Move", title: "Move the occurrence at", verb: "Move it", at: "To" },
  add: { type: "Add", title: "Add a run", verb: "Add it", at: "At" },
};

const instant = (iso) => (iso ? Date.parse(iso) : null);
const keyOf = (e) => `${(e.type || "").toLowerCase()}|${instant(e.occurrence)}|${instant(e.moveTo)}`;

// `query`: the api-version the page reads with; `reload(focusId)` renders the page again.
export function occurrenceControl({ jobPath, query, zone, exceptions, reload }) {
  const where = zone || "UTC";
  const editor = h("div", { id: "occurrence-editor", "aria-live": "polite" });
  const listResult = h("div", { id: "exceptions-result" });
  let opener = null;

  // The list as stored now, changed by `edit`, written whole.
  const change = async (label, edit, shown, focusId) => {
    announce(`${label}…`);
    try {
      const job = await call("GET", jobPath, { query });
      const current = (job.properties || {}).exceptions || [];
      await call("PATCH", jobPath, { query, body: { properties: { exceptions: edit(current) } } });
    } catch (error) {
      fill(shown, failure(error, label));
      announce(`${label} refused.`);
      return;
    }
    announce(`${label}: done.`);
    await reload(focusId);
  };

  const close = () => {
    editor.replaceChildren();
    if (opener) opener.focus();
  };

  const open = (kind, occurrence, button) => {
    const spec = KINDS[kind];
    opener = button;
    const at = spec.at ? h("input", { id: "exception-at", autocomplete: "off", spellcheck: "false",
      value: utcToZoned(occurrence, zone), placeholder: "2026-03-29T09:00", "aria-describedby": "exception-at-help" })
      : null;
    const note = h("input", { id: "exception-note", autocomplete: "off", maxlength: 500 });
    const result = h("div", { id: "exception-result" });
    const submit = async (event) => {
      event.preventDefault();
      const exception = { type: spec.type, occurrence };
      if (at) {
        const chosen = readInstant(at.value, zone);
        if (!chosen) {
          fill(result, failure(`${spec.at}: write a wall-clock time in ${where} (2026-03-29T09:00), or one with Z `
            + "or an offset."));
          at.focus();
          return;
        }
        if (kind === "move") exception.moveTo = chosen;
        else exception.occurrence = chosen;
      }
      if (note.value.trim()) exception.note = note.value.trim();
      await change(spec.verb.replace(" it", ""), (list) => [...list, exception], result, "exceptions-heading");
    };
    fill(editor, h("form", { id: "exception-form", class: "inline-form", onsubmit: submit, novalidate: true },
      h("p", { id: "exception-title" }, occurrence && kind !== "add" ? `${spec.title} ${zoned(occurrence, zone)}`
        : spec.title),
      at ? h("div", { class: "field" }, h("label", { for: "exception-at" }, spec.at), at,
        h("p", { class: "muted", id: "exception-at-help" }, `A wall-clock time in ${where} (2026-03-29T09:00), or `
          + "with Z or an offset.")) : null,
      h("div", { class: "field" }, h("label", { for: "exception-note" }, "Note (optional)"), note),
      h("div", { class: "buttons" }, h("button", { type: "submit", id: "exception-save" }, spec.verb),
        h("button", { type: "button", id: "exception-dismiss", class: "secondary", onclick: close }, "Cancel")),
      result));
    (at || note).focus();
  };

  // The buttons of one previewed occurrence: none on an instant an exception put there.
  const actions = (item) => {
    if ((item.notes || []).some((n) => PUT_THERE.has((n.code || "").toLowerCase()))) {
      return h("span", { class: "muted" }, "an exception's: cancel it below");
    }
    const when = zoned(item.occurrenceTime, zone);
    const skip = h("button", { type: "button", class: "secondary skip-occurrence", "aria-label": `Skip ${when}`,
      onclick: () => open("skip", item.occurrenceTime, skip) }, "Skip");
    const move = h("button", { type: "button", class: "secondary move-occurrence", "aria-label": `Move ${when}`,
      onclick: () => open("move", item.occurrenceTime, move) }, "Move…");
    return h("span", { class: "row-actions" }, skip, " ", move);
  };

  const add = h("button", { type: "button", id: "add-run", class: "secondary",
    onclick: () => open("add", null, add) }, "Add a run…");

  const sorted = [...(exceptions || [])].sort((a, b) => instant(a.occurrence) - instant(b.occurrence));
  const cancel = (exception) => change("Cancel the exception",
    (list) => list.filter((e) => keyOf(e) !== keyOf(exception)), listResult, "exceptions-heading");
  const rows = sorted.map((e, i) => [e.type, zoned(e.occurrence, zone), e.moveTo ? zoned(e.moveTo, zone) : "—",
    e.note || "—", h("button", { type: "button", id: `cancel-exception-${i}`, class: "secondary",
      "aria-label": `Cancel the ${e.type} of ${zoned(e.occurrence, zone)}`, onclick: () => cancel(e) }, "Cancel")]);
  const list = sorted.length
    ? table("Skipped, moved and added occurrences, by occurrence", ["Type", "Occurrence", "Moved to", "Note", ""], rows)
    : h("p", { class: "muted", id: "exceptions-none" }, "None: every occurrence runs as the recurrence says.");
  if (sorted.length) list.id = "exceptions-table";

  return { actions, add, editor, list: [list, listResult] };
}
