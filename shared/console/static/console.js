// Entry point: reads the page's own address (ARM-id shaped, so links can be shared) and renders it.
//   {console}?subscription=S                                   collections of S
//   {console}?subscription=S&action=create                     a new collection
//   {console}/subscriptions/S/resourceGroups/G/providers/Microsoft.Scheduler/jobCollections/C   its jobs
//   .../jobCollections/C?action=create                         a new job (a form, or JSON)
//   .../jobCollections/C/jobs/J[?action=edit]                  one job (or its editor)
//   .../jobCollections/C/jobs/J?action=occurrences             its next occurrences, what-if, ledger
import { collectionPath, consoleBase, credentials, saveCredentials } from "./api.js";
import { completeSignIn, currentToken, session, signIn, signInConfig, signInEnabled, signOut } from "./auth.js";
import { renderCollectionForm } from "./collection-form.js";
import { renderCollections, renderSubscriptionPrompt } from "./collections.js";
import { h, show, failure } from "./dom.js";
import { renderJobForm } from "./job-form.js";
import { renderJob } from "./job.js";
import { renderJobs } from "./jobs.js";
import { renderOccurrences } from "./occurrences.js";

const PAGE = /^\/subscriptions\/([^/]+)(?:\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Scheduler\/jobCollections\/([^/]+)(?:\/jobs\/([^/]+))?)?\/?$/i;

function crumbs(sub, group, collection, job) {
  const items = [];
  const base = consoleBase();
  if (sub) items.push(h("li", {}, h("a", { href: `${base}?subscription=${encodeURIComponent(sub)}` }, `Subscription ${sub}`)));
  if (collection) items.push(h("li", {}, h("a", { href: base + collectionPath(sub, group, collection) }, `${group} / ${collection}`)));
  if (job) items.push(h("li", {}, h("a", { href: `${base}${collectionPath(sub, group, collection)}/jobs/${encodeURIComponent(job)}` }, job)));
  if (items.length) items[items.length - 1].querySelector("a").setAttribute("aria-current", "page");
  document.getElementById("crumbs").replaceChildren(...items);
}

// With Entra ID sign-in the header offers Sign in / Sign out; otherwise the Credentials form (a pasted
// token or a Functions key, for SCHEDULER_AUTH=key|none or an entra deployment without a console client id).
function setUpSession() {
  const box = document.getElementById("session");
  box.hidden = false;
  const signedIn = Boolean(currentToken());
  document.getElementById("signed-in-as").textContent = signedIn ? `Signed in as ${session().user || "you"}` : "";
  const inButton = document.getElementById("sign-in");
  const outButton = document.getElementById("sign-out");
  inButton.hidden = signedIn;
  outButton.hidden = !signedIn;
  inButton.onclick = () => signIn();
  outButton.onclick = () => signOut();
}

function setUpCredentials() {
  const { problem } = signInConfig();
  const details = document.getElementById("credentials");
  details.hidden = false;
  const form = document.getElementById("credentials-form");
  if (problem) form.prepend(h("p", { class: "field-error" }, problem));
  const { token, key } = credentials();
  form.token.value = token;
  form["functions-key"].value = key;
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    saveCredentials(form.token.value.trim(), form["functions-key"].value.trim());
    location.reload();
  });
  document.getElementById("forget").addEventListener("click", () => { saveCredentials("", ""); location.reload(); });
}

async function route() {
  const rest = location.pathname.slice(consoleBase().length);
  const query = new URLSearchParams(location.search);
  if (rest === "" || rest === "/") {
    const sub = query.get("subscription");
    crumbs(sub);
    if (!sub) return renderSubscriptionPrompt();
    return query.get("action") === "create" ? renderCollectionForm(sub) : renderCollections(sub);
  }
  const match = PAGE.exec(rest);
  if (!match) return show(h("h1", {}, "Not found"), h("p", {}, "This console page does not exist."));
  const [sub, group, collection, job] = match.slice(1).map((part) => (part ? decodeURIComponent(part) : part));
  crumbs(sub, group, collection, job);
  if (!collection) {
    location.replace(`${consoleBase()}?subscription=${encodeURIComponent(sub)}`);
    return undefined;
  }
  const ids = { sub, group, collection, job, path: collectionPath(sub, group, collection) };
  const action = query.get("action");
  if (job && action === "occurrences") return renderOccurrences(ids);
  if (job) return action === "edit" ? renderJobForm(ids, job) : renderJob(ids);
  return action === "create" ? renderJobForm(ids, null) : renderJobs(ids, query);
}

async function start() {
  if (signInEnabled()) {
    try {
      await completeSignIn();
    } catch (error) {
      setUpSession();
      show(h("h1", {}, "Sign-in"), failure(error),
        h("p", {}, h("button", { type: "button", id: "sign-in-again", onclick: () => signIn(consoleBase()) }, "Sign in again")));
      return;
    }
    setUpSession();
  } else {
    setUpCredentials();
  }
  await route();
}

start().catch((error) => show(failure(error, "The page could not be shown")));
