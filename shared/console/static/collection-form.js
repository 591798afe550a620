// Create a job collection (as `scheduler collections create` does): resource group, name, location, SKU and
// an optional maxJobCount, PUT through the API. The API's validation error is shown next to the field whose
// property it names. A name already taken is refused here rather than replaced: PUT would overwrite it.
import { ApiFailure, call, collectionPath, consoleBase } from "./api.js";
import { announce, failure, h, show } from "./dom.js";

const SKUS = ["Standard", "Free", "P10Premium", "P20Premium"];
// API property path -> the field that edits it.
const FIELDS = [["location", "collection-location"], ["properties.sku", "collection-sku"],
  ["properties.quota.maxJobCount", "collection-max-jobs"], ["name", "collection-name"]];

function field(id, label, control, help) {
  return h("div", { class: "field" }, h("label", { for: id }, label), control,
    help ? h("p", { class: "muted", id: `${id}-help` }, help) : null, h("p", { class: "field-error", id: `${id}-error`, hidden: true }));
}

function clearErrors(form) {
  for (const input of form.querySelectorAll("[aria-invalid]")) {
    input.removeAttribute("aria-invalid");
    input.setAttribute("aria-describedby", input.dataset.help || "");
  }
  for (const note of form.querySelectorAll(".field-error")) { note.hidden = true; note.textContent = ""; }
  document.getElementById("form-result").replaceChildren();
}

function showError(error) {
  const path = error.path || (/^sku:/i.test(error.message || "") ? "properties.sku" : null);
  const hit = path && FIELDS.find(([prefix]) => path === prefix || path.startsWith(`${prefix}.`));
  if (!hit) {
    document.getElementById("form-result").replaceChildren(failure(error, "The collection was not created"));
    return;
  }
  const input = document.getElementById(hit[1]);
  const note = document.getElementById(`${hit[1]}-error`);
  note.textContent = String(error);
  note.hidden = false;
  input.setAttribute("aria-invalid", "true");
  input.setAttribute("aria-describedby", `${hit[1]}-error ${input.dataset.help || ""}`.trim());
  input.focus();
}

export function renderCollectionForm(sub) {
  document.title = `New job collection · Scheduler console`;
  const maxJobs = h("input", { id: "collection-max-jobs", name: "maxJobs", type: "number", inputmode: "numeric",
    "data-help": "collection-max-jobs-help", "aria-describedby": "collection-max-jobs-help" });
  const form = h("form", { id: "collection-form" },
    field("collection-group", "Resource group", h("input", { id: "collection-group", name: "group", required: true, autocomplete: "off" })),
    field("collection-name", "Name", h("input", { id: "collection-name", name: "name", required: true, autocomplete: "off" })),
    field("collection-location", "Location", h("input", { id: "collection-location", name: "location", required: true,
      placeholder: "westeurope", autocomplete: "off" })),
    field("collection-sku", "SKU", h("select", { id: "collection-sku", name: "sku" },
      SKUS.map((s) => h("option", { value: s }, s)))),
    field("collection-max-jobs", "Maximum jobs (optional)", maxJobs,
      "quota.maxJobCount: may lower the SKU's limit, never raise it."),
    h("div", { class: "buttons" },
      h("button", { type: "submit", id: "create-collection" }, "Create collection"),
      h("a", { class: "button secondary", href: `${consoleBase()}?subscription=${encodeURIComponent(sub)}` }, "Cancel")),
    h("div", { id: "form-result" }));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearErrors(form);
    // form.elements, not form.name: a form's own "name" property would shadow the field of that name
    const value = (member) => form.elements.namedItem(member).value.trim();
    const [group, name] = [value("group"), value("name")];
    const path = collectionPath(sub, group, name);
    const body = { location: value("location"), properties: { sku: { name: value("sku") } } };
    if (value("maxJobs")) body.properties.quota = { maxJobCount: Number(value("maxJobs")) };
    const submit = document.getElementById("create-collection");
    submit.disabled = true;
    announce("Creating the collection…");
    try {
      const taken = await call("GET", path).then(() => true, (error) => {
        if (error.status === 404) return false;
        throw error;
      });
      if (taken) throw new ApiFailure(409, "Conflict", `name: a job collection '${name}' already exists in ${group}.`);
      await call("PUT", path, { body });
      location.href = `${consoleBase()}${path}`;
    } catch (error) {
      showError(error);
      announce("The collection was not created.");
      submit.disabled = false;
    }
  });
  show(h("h1", {}, "New job collection"), h("p", { class: "sub" }, `Subscription ${sub}`), form);
  document.getElementById("collection-group").focus();
}
