// One job's occurrences (`.../jobs/J?action=occurrences`), through the newer api-version: the next ones as the
// engine will fire them, with notes (DST gap or fold, the end, the missed-run policy); a what-if of an edited
// definition (PUT ?whatIf=true: validated, answered, nothing written); and the ledger, one entry per
// occurrence with the reason it did not run. Each previewed occurrence can be skipped or moved, a run added, and
// the job's exceptions cancelled (occurrence-control.js).
import { call, consoleBase } from "./api.js";
import { announce, failure, h, show, table } from "./dom.js";
import { occurrenceControl } from "./occurrence-control.js";
import { zoned } from "./zones.js";

export const NEWER_API_VERSION = "2026-12-01-preview";
const NEWER = { "api-version": NEWER_API_VERSION };
const LEDGER_TOP = 50;

// Each note with its code (any code the API answers: DstGap, Moved, Extra, Paused, ...), then its message.
function notes(list, id) {
  if (!(list || []).length) return "—";
  return h("ul", { class: "notes", id }, list.map((n) => h("li", { "data-code": n.code || "" },
    h("span", { class: "note-code" }, n.code || "Note"), " ", n.message || "")));
}

// Times in the job's own zone (`zone`: its recurrence.timeZone), UTC beside; UTC alone without one. `actions`,
// when given, makes a last column of what can be done to each occurrence.
function occurrencesTable(caption, answer, zone, actions) {
  const rows = (answer.value || []).map((o, i) => [String(i + 1), zoned(o.occurrenceTime, zone),
    zoned(o.fireTime, zone), notes(o.notes), ...(actions ? [actions(o)] : [])]);
  return h("div", {},
    (answer.notes || []).length ? notes(answer.notes, actions ? "preview-notes" : null) : null,
    table(caption, ["#", "Occurrence", "Fires", "Notes", ...(actions ? ["Change"] : [])], rows, [0]));
}

function ledgerTable(entries, zone) {
  const rows = entries.map((e) => {
    const p = e.properties || {};
    return [zoned(p.occurrenceTime, zone), p.trigger || "—",
      h("span", { class: `outcome-${(p.status || "").toLowerCase()}` }, p.status || "—"), p.reason || "—",
      String(p.attempts ?? 0), p.message || ""];
  });
  return table(`The latest ${entries.length} occurrences, newest first`,
    ["Occurrence", "Trigger", "Status", "Reason", "Attempts", "Message"], rows, [4]);
}

function section(id, title, ...content) {
  return h("section", { "aria-labelledby": `${id}-heading`, id }, h("h2", { id: `${id}-heading` }, title), ...content);
}

export async function renderOccurrences(ids, focusId) {
  const jobPath = `${ids.path}/jobs/${encodeURIComponent(ids.job)}`;
  document.title = `${ids.job} occurrences · Scheduler console`;
  const heading = h("h1", {}, `Occurrences of ${ids.job}`);
  let job;
  let preview;
  let ledger;
  try {
    [job, preview, ledger] = await Promise.all([
      call("GET", jobPath, { query: NEWER }),
      call("GET", `${jobPath}/occurrences`, { query: { ...NEWER, count: 10 } }),
      call("GET", `${jobPath}/history`, { query: { ...NEWER, $top: LEDGER_TOP } }),
    ]);
  } catch (error) {
    show(heading, failure(error, "Could not read the job"));
    return;
  }
  const zone = ((job.properties || {}).recurrence || {}).timeZone;
  const control = occurrenceControl({ jobPath, query: NEWER, zone, exceptions: (job.properties || {}).exceptions,
    reload: (id) => renderOccurrences(ids, id) });
  const definition = { ...(job.properties || {}) };
  delete definition.status;
  const editor = h("textarea", { id: "what-if-definition", rows: 14, spellcheck: "false",
    "aria-describedby": "what-if-help" });
  editor.value = JSON.stringify({ properties: definition }, null, 2);
  const result = h("div", { id: "what-if-result" });
  const whatIf = async (event) => {
    event.preventDefault();
    let body;
    try {
      body = JSON.parse(editor.value);
    } catch (error) {
      result.replaceChildren(failure(`Not JSON: ${error.message}`));
      return;
    }
    announce("What-if…");
    try {
      const answer = await call("PUT", jobPath, { query: { ...NEWER, whatIf: "true", count: 10 }, body });
      const p = (answer.job || {}).properties || {};
      result.replaceChildren(
        h("p", { id: "what-if-summary" }, `${answer.changeType}: the job would be ${p.state || "?"}; `
          + "nothing was written."),
        occurrencesTable("Its next occurrences", answer.occurrences || {}, (p.recurrence || {}).timeZone));
      announce("What-if done: nothing was written.");
    } catch (error) {
      result.replaceChildren(failure(error, "The write would be refused"));
      announce("What-if: the write would be refused.");
    }
  };
  show(
    heading,
    h("p", { class: "sub" }, h("a", { href: `${consoleBase()}${jobPath}` }, "Back to the job")),
    section("preview", "Next 10 occurrences, as they will fire",
      occurrencesTable("Next occurrences", preview, zone, control.actions),
      h("div", { class: "buttons" }, control.add), control.editor),
    section("exceptions", "Exceptions", h("p", { class: "muted" }, "Occurrences skipped or moved, and extra runs, "
      + "without changing the recurrence. Cancel one to let the recurrence decide again."), ...control.list),
    section("what-if", "What if",
      h("p", { id: "what-if-help" }, "Edit the definition and ask what would happen: the answer is the job as it "
        + "would be stored and its next occurrences. Nothing is written."),
      h("form", { id: "what-if-form", onsubmit: whatIf },
        h("label", { for: "what-if-definition" }, "Job definition (JSON)"), editor,
        h("div", { class: "buttons" }, h("button", { type: "submit", id: "what-if-run" }, "What if"))),
      result),
    section("ledger", "Ledger", ledgerTable(ledger.value || [], zone)),
  );
  const focus = focusId && document.getElementById(focusId);
  if (focus) {
    focus.setAttribute("tabindex", "-1");
    focus.focus();
  }
}
