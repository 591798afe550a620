// A collection's actions (as `scheduler collections enable|disable|delete` do): enable and disable (the API
// cascades the state to the collection's jobs), delete after a confirmation naming how many jobs go with it.
import { call, consoleBase } from "./api.js";
import { announce, confirmAction, failure, h } from "./dom.js";

export function collectionActions(ids, collection, jobCount, rerender) {
  const state = ((collection.properties || {}).state || "").toLowerCase();
  const result = h("div", { id: "collection-result" });
  const act = async (label, work) => {
    const buttons = document.querySelectorAll("#collection-actions button");
    for (const b of buttons) b.disabled = true;
    announce(`${label}…`);
    try {
      await work();
    } catch (error) {
      result.replaceChildren(failure(error, label));
      for (const b of buttons) b.disabled = false;
      announce(`${label} failed.`);
    }
  };
  const setState = (verb) => act(verb === "enable" ? "Enable collection" : "Disable collection", async () => {
    await call("POST", `${ids.path}/${verb}`);
    await rerender();
    announce(`Collection ${verb}d.`);
  });
  const remove = async () => {
    const jobs = jobCount === null ? "all its jobs" : `its ${jobCount} job${jobCount === 1 ? "" : "s"}`;
    if (!await confirmAction(`Delete job collection ${ids.collection}?`,
      `The collection and ${jobs}, with their history, are removed. This cannot be undone.`)) {
      announce("Delete cancelled.");
      return;
    }
    await act("Delete collection", async () => {
      await call("DELETE", ids.path);
      location.href = `${consoleBase()}?subscription=${encodeURIComponent(ids.sub)}`;
    });
  };
  return [
    h("div", { class: "toolbar", id: "collection-actions", role: "group", "aria-label": "Collection actions" },
      h("button", { type: "button", id: "enable-collection", disabled: state === "enabled",
        onclick: () => setState("enable") }, "Enable collection"),
      h("button", { type: "button", id: "disable-collection", disabled: state === "disabled",
        onclick: () => setState("disable") }, "Disable collection"),
      h("button", { type: "button", id: "delete-collection", class: "danger", onclick: remove }, "Delete collection")),
    result,
  ];
}
