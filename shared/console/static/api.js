// The management API as the console uses it: same origin, the caller's credentials from this tab's
// sessionStorage (the signed-in user's token with Entra ID sign-in, see auth.js; otherwise what the
// Credentials form holds), ARM errors turned into ApiFailure (code, message and the property path it names).
import { bearer, dropSession, signInEnabled } from "./auth.js";

const meta = (name) => document.querySelector(`meta[name="${name}"]`).content;
// The newest api-version (the shell names it): the one that shows every extension property.
const apiVersion = () => meta("scheduler-api-version");
export const apiBase = () => meta("scheduler-api");
export const consoleBase = () => meta("scheduler-console");

export function collectionPath(sub, group, collection) {
  return `/subscriptions/${encodeURIComponent(sub)}/resourceGroups/${encodeURIComponent(group)}`
    + `/providers/Microsoft.Scheduler/jobCollections/${encodeURIComponent(collection)}`;
}

const TOKEN = "scheduler.token";
const KEY = "scheduler.functionsKey";

export function credentials() {
  return { token: sessionStorage.getItem(TOKEN) || "", key: sessionStorage.getItem(KEY) || "" };
}

export function saveCredentials(token, key) {
  token ? sessionStorage.setItem(TOKEN, token) : sessionStorage.removeItem(TOKEN);
  key ? sessionStorage.setItem(KEY, key) : sessionStorage.removeItem(KEY);
}

export class ApiFailure extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
    // Validation messages start with the property they name: "properties.recurrence.interval: ..."
    const named = /^((?:properties|name|location|tags)[\w.[\]-]*): /.exec(message || "");
    this.path = named ? named[1] : null;
  }
  toString() { return `${this.code} (${this.status}): ${this.message}`; }
}

async function headers(json) {
  const { token, key } = signInEnabled() ? { token: await bearer(), key: "" } : credentials();
  if (signInEnabled() && !token) throw new ApiFailure(401, "SignInRequired", "Sign in to see and change jobs.");
  const h = { Accept: "application/json" };
  if (json) h["Content-Type"] = "application/json";
  if (token) h.Authorization = `Bearer ${token}`;
  if (key) h["x-functions-key"] = key;
  return h;
}

function url(path, query = {}) {
  const own = path.startsWith(`${consoleBase()}/`);
  const u = path.startsWith("http") ? new URL(path) : new URL(own ? path : apiBase() + path, location.origin);
  if (!u.searchParams.has("api-version") && !own) {
    u.searchParams.set("api-version", apiVersion());
  }
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) u.searchParams.set(k, v);
  return u;
}

export async function call(method, path, { query, body } = {}) {
  const target = url(path, query);
  if (target.origin !== location.origin) throw new ApiFailure(0, "Refused", "The API pointed to another origin.");
  let response;
  try {
    response = await fetch(target, {
      method, headers: await headers(body !== undefined), body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "same-origin", cache: "no-store",
    });
  } catch (error) {
    if (error instanceof ApiFailure) throw error;
    throw new ApiFailure(0, "NetworkError", `The API could not be reached: ${error.message}`);
  }
  const text = await response.text();
  let document = null;
  try { document = text ? JSON.parse(text) : null; } catch { document = null; }
  if (!response.ok) {
    if (response.status === 401 && signInEnabled()) dropSession(); // refused: only a new sign-in helps
    const error = document && document.error;
    if (error) throw new ApiFailure(response.status, error.code, error.message);
    const hint = response.status === 401 ? "Sign-in required: set a token under Credentials." : response.statusText;
    throw new ApiFailure(response.status, response.status === 401 ? "AuthenticationFailed" : "HttpError", hint);
  }
  return document;
}

// Every item of a list, following nextLink until it is absent or null.
export async function listAll(path, query = {}) {
  const items = [];
  let page = await call("GET", path, { query });
  for (let guard = 0; guard < 1000; guard += 1) {
    items.push(...(page.value || []));
    if (!page.nextLink) break;
    page = await call("GET", page.nextLink);
  }
  return items;
}

// The schedule in words and the next occurrences, computed by the engine on the server.
export async function schedules(jobs, count = 0) {
  const answer = await call("POST", `${consoleBase()}/schedule`, {
    body: { count, jobs: jobs.map((p) => ({ startTime: p.startTime, recurrence: p.recurrence, from: p.from })) },
  });
  return answer.value;
}

// Each collection's effective limits (the plan's, tightened by its quota), as the API enforces them.
export async function limitsOf(collections) {
  const answer = await call("POST", `${consoleBase()}/limits`, { body: { collections } });
  return answer.value;
}

// The members of a job or collection document that the API's schema does not know (api-version 2016-03-01
// ignores them): [{path, message}].
export async function unknownMembers(kind, document) {
  const answer = await call("POST", `${consoleBase()}/check`, { body: { kind, document } });
  return answer.value;
}
