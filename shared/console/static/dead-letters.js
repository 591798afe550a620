// A collection's dead letters (GET .../deadLetters, newer api-version; shared/api/dead_letters.py): occurrences
// whose run ended failed for good, newest occurrence first, PAGE_SIZE at a time ("More" follows the API's
// nextLink). Each row can be shown (the occurrence's attempts as the API's show returns them: each request's
// outcome and the target's answer as history keeps it; the API leaves secrets out, so this shows all it gets) and
// replayed (queued again with its original identity). The whole list is replayed or purged only after the
// console's confirmation dialog. A role that may not read them (403) gets a muted note, not an error: the rest of
// the collection's page is still theirs. Times in UTC (a collection has no zone).
import { call } from "./api.js";
import { announce, confirmAction, failure, fill, folded, h, table } from "./dom.js";
import { zoned } from "./zones.js";

const PAGE_SIZE = 25;
const HEAD = ["Job", "Occurrence", "Failed at", "Attempts", "State", "Last error", "Actions"];

const idOf = (letter) => String(letter.name || "").split("/").pop();
const LINE = 160; // characters of the last error shown in the row; Show has the whole answer
function firstLine(text) {
  const line = String(text || "").split(/\r?\n/, 1)[0].trim();
  return line.length > LINE ? `${line.slice(0, LINE)}…` : line || "—";
}
const isErrorAction = (p) => /^erroraction$/i.test(p.actionName || "");

// The list names only the last attempt of the latest run: a main action's retry count says how many it made; an
// error action's last means the main action's retries were all spent first.
function attempts(p) {
  if (isErrorAction(p)) return `retries spent, then the error action${p.retryCount ? ` (retry ${p.retryCount})` : ""}`;
  return String((p.retryCount || 0) + 1);
}

function attemptLabel(p) {
  const retry = p.retryCount || 0;
  if (isErrorAction(p)) return retry ? `error action, retry ${retry}` : "error action";
  return retry ? `retry ${retry}` : "attempt 1";
}

// One dead letter as the API's show returns it: its identity, then its attempts (its replays' too), newest first.
function detail(letter) {
  const p = letter.properties || {};
  const tries = (p.attempts || []).map((a) => a.properties || {});
  const shown = table(`Attempts of ${p.jobName} at ${zoned(p.occurrenceTime, null)}, newest first`,
    ["Started", "Attempt", "Status", "Ended", "Answer"],
    tries.map((a) => [zoned(a.startTime, null), attemptLabel(a),
      h("span", { class: `outcome-${(a.status || "").toLowerCase()}` }, a.status || "—"), zoned(a.endTime, null),
      folded(a.message)]));
  shown.id = "dead-letter-attempts";
  return [h("h3", { id: "dead-letter-detail-heading" }, `Dead letter ${idOf(letter)}`),
    h("dl", { class: "props" },
      h("dt", {}, "Job"), h("dd", {}, p.jobName || "—"),
      h("dt", {}, "Occurrence"), h("dd", {}, zoned(p.occurrenceTime, null)),
      h("dt", {}, "Trigger"), h("dd", {}, p.trigger || "—"),
      h("dt", {}, "Execution tag"), h("dd", {}, p.executionTag || "—"),
      h("dt", {}, "State"), h("dd", {}, `${p.state || "—"}${p.replayCount ? `, replayed ${p.replayCount}×` : ""}`)),
    shown];
}

function replayWords(answer) {
  const items = answer.value || [];
  const queued = items.filter((i) => i.status === 200).length;
  const refused = items.filter((i) => i.status !== 200);
  return [h("p", {}, items.length ? `${queued} replay${queued === 1 ? "" : "s"} queued` : "Nothing to replay.",
    refused.length ? `; ${refused.length} refused:` : "", answer.more ? " More are left: replay all again." : ""),
  refused.length ? h("ul", {}, refused.map((i) => h("li", {}, `${i.id}: ${((i.error || {}).message) || i.status}`)))
    : null];
}

// Filled when the answer comes, so the rest of the page does not wait for it.
export function deadLettersSection(ids) {
  const base = `${ids.path}/deadLetters`;
  const heading = h("h2", { id: "dead-letters-heading" }, "Dead letters");
  const note = h("p", { class: "sub" }, "Occurrences whose run ended failed for good (retries and error action "
    + "spent, or the error action failed). A replay runs one again with its original identity.");
  const result = h("div", { id: "dead-letters-result", "aria-live": "polite" });
  const shown = h("div", { id: "dead-letter-detail" });
  const box = h("section", { id: "dead-letters", "aria-labelledby": "dead-letters-heading" }, heading, note,
    h("p", {}, "Loading…"));
  let items = [];
  let next = null;

  const act = async (label, work) => {
    const buttons = box.querySelectorAll("button");
    for (const b of buttons) b.disabled = true;
    announce(`${label}…`);
    try {
      await work();
    } catch (error) {
      fill(result, failure(error, label));
      announce(`${label} failed.`);
    } finally {
      for (const b of box.querySelectorAll("button")) if (!b.dataset.inFlight) b.disabled = false;
    }
  };
  const showOne = (id) => act("Show dead letter", async () => {
    fill(shown, detail(await call("GET", `${base}/${encodeURIComponent(id)}`)));
    announce(`Dead letter ${id} shown.`);
    shown.scrollIntoView({ block: "nearest" });
  });
  const replayOne = (id) => act("Replay", async () => {
    const p = (await call("POST", `${base}/${encodeURIComponent(id)}/replay`)).properties || {};
    fill(result, h("p", { id: "dead-letters-answer" },
      `Replay of ${p.jobName} at ${zoned(p.occurrenceTime, null)} queued: ${p.state}, replay ${p.replayCount}.`));
    announce("Replay queued.");
    await load();
  });
  const replayAll = async () => {
    if (!await confirmAction(`Replay the dead letters of ${ids.collection}?`, "Each is queued again with its "
      + "original identity, under its job's current definition (at most 100 per click).", "Replay all")) {
      announce("Replay cancelled.");
      return;
    }
    await act("Replay all", async () => {
      fill(result, h("div", { id: "dead-letters-answer" }, replayWords(await call("POST", `${base}/replay`,
        { body: { all: true } }))));
      announce("Replays queued.");
      await load();
    });
  };
  const purge = async () => {
    if (!await confirmAction(`Purge the dead letters of ${ids.collection}?`, "Every dead letter is removed, except "
      + "those whose replay is in flight. Their attempts stay in the jobs' history. This cannot be undone.", "Purge")) {
      announce("Purge cancelled.");
      return;
    }
    await act("Purge", async () => {
      const answer = await call("DELETE", base);
      fill(result, h("p", { id: "dead-letters-answer" }, `Purged ${answer.purged} dead letter`
        + `${answer.purged === 1 ? "" : "s"}${answer.inFlight ? `; ${answer.inFlight} kept, their replay in flight` : ""}.`));
      fill(shown);
      announce("Dead letters purged.");
      await load();
    });
  };

  const row = (letter) => {
    const p = letter.properties || {};
    const id = idOf(letter);
    const what = `${p.jobName} at ${zoned(p.occurrenceTime, null)}`;
    const replaying = p.state === "Replaying";
    return [p.jobName || "—", zoned(p.occurrenceTime, null), zoned(p.endTime, null), attempts(p),
      `${p.state || "—"}${p.replayCount ? ` (replayed ${p.replayCount}×)` : ""}`,
      h("span", { class: "message", title: p.message || "" }, firstLine(p.message)),
      h("span", { class: "buttons" },
        h("button", { type: "button", class: "secondary show-dead-letter", "aria-label": `Show ${what}`,
          onclick: () => showOne(id) }, "Show"),
        h("button", { type: "button", class: "secondary replay-dead-letter", "aria-label": `Replay ${what}`,
          disabled: replaying, "data-in-flight": replaying ? "true" : null,
          title: replaying ? "A replay of it is in flight." : null, onclick: () => replayOne(id) }, "Replay"))];
  };
  const more = () => act("More dead letters", async () => {
    const page = await call("GET", next);
    items = [...items, ...(page.value || [])];
    next = page.nextLink || null;
    render();
  });
  const render = () => {
    if (!items.length) {
      fill(box, heading, note, h("p", { id: "dead-letters-none", class: "muted" },
        "No dead letters: no occurrence of this collection has failed for good."), result, shown);
      return;
    }
    const list = table(`${items.length}${next ? "+" : ""} dead letter${items.length === 1 ? "" : "s"}, newest `
      + "occurrence first", HEAD, items.map(row));
    list.id = "dead-letters-table";
    fill(box, heading, note,
      h("div", { class: "toolbar", role: "group", "aria-label": "Dead letter actions" },
        h("button", { type: "button", id: "replay-all-dead-letters", onclick: replayAll }, "Replay all"),
        h("button", { type: "button", id: "purge-dead-letters", class: "danger", onclick: purge }, "Purge")),
      list,
      next ? h("button", { type: "button", id: "more-dead-letters", class: "secondary", onclick: more }, "More") : null,
      result, shown);
  };
  async function load() {
    try {
      const page = await call("GET", base, { query: { $top: PAGE_SIZE } });
      items = page.value || [];
      next = page.nextLink || null;
      render();
    } catch (error) {
      fill(box, heading, note, error.status === 403
        // A role that may not read the collection's jobs: its dead letters are not for it either.
        ? h("p", { id: "dead-letters-refused", class: "muted" }, "Only a role that reads this collection's jobs "
          + "(Reader or above) shows its dead letters.")
        : failure(error, "Could not read the dead letters"));
    }
  }
  load();
  return box;
}
