// Sign-in with Entra ID (SCHEDULER_AUTH=entra with SCHEDULER_CONSOLE_CLIENT_ID): the OAuth 2.0 authorization
// code flow with PKCE (RFC 6749 §4.1, RFC 7636 S256), the console being a single-page app, i.e. a public
// client without a secret. Hand-written rather than MSAL.js on purpose: the console ships no third-party code
// and fetches nothing from a CDN at run time, and the whole flow is one redirect and one POST (the page's
// Content-Security-Policy allows that POST to the tenant's token endpoint and nowhere else).
// The access token (for the scheduler's own audience) and its expiry live in this tab's sessionStorage only;
// no refresh token is asked for: when the token expires the tab signs in again, a redirect that Entra ID
// answers without a prompt while the user's session with it lasts.

const consoleBase = () => document.querySelector('meta[name="scheduler-console"]').content;
const SESSION = "scheduler.session";
const PENDING = "scheduler.signin.pending";
const AUTO = "scheduler.signin.auto";
const EARLY_MS = 60_000; // renew a minute before expiry: a request must not arrive with a token that just died

export function signInConfig() {
  const element = document.querySelector('meta[name="scheduler-signin"]');
  try {
    return JSON.parse(element ? element.content : "") || { mode: "none" };
  } catch {
    return { mode: "none" };
  }
}

export const signInEnabled = () => Boolean(signInConfig().clientId);

export class SignInFailure extends Error {
  toString() { return `Sign-in failed: ${this.message}`; }
}

function base64url(bytes) {
  let text = "";
  for (const byte of new Uint8Array(bytes)) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

const randomText = (bytes) => base64url(crypto.getRandomValues(new Uint8Array(bytes)));

async function challengeOf(verifier) {
  return base64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
}

// The one redirect URI registered for the console (SPA platform): the console's root, without a query.
export const redirectUri = () => `${location.origin}${consoleBase()}`;

function read(key) {
  try {
    return JSON.parse(sessionStorage.getItem(key) || "null");
  } catch {
    return null;
  }
}

export const session = () => read(SESSION);

export function dropSession() {
  sessionStorage.removeItem(SESSION);
}

export function currentToken() {
  const s = session();
  return s && s.accessToken && s.expiresAt - EARLY_MS > Date.now() ? s.accessToken : null;
}

// Only a console page of this origin may be returned to after signing in.
function safeReturn(path) {
  const base = consoleBase();
  return typeof path === "string" && (path === base || path.startsWith(`${base}/`) || path.startsWith(`${base}?`))
    ? path : base;
}

export async function signIn(returnTo = location.pathname + location.search) {
  const config = signInConfig();
  const verifier = randomText(48); // 64 characters of the unreserved alphabet (RFC 7636 §4.1: 43 to 128)
  const pending = { state: randomText(16), nonce: randomText(16), verifier, returnTo: safeReturn(returnTo) };
  sessionStorage.setItem(PENDING, JSON.stringify(pending));
  const query = new URLSearchParams({
    client_id: config.clientId, response_type: "code", response_mode: "query", redirect_uri: redirectUri(),
    scope: `${config.scope} openid profile`, state: pending.state, nonce: pending.nonce,
    code_challenge: await challengeOf(verifier), code_challenge_method: "S256",
  });
  const last = session();
  if (last && last.user) query.set("login_hint", last.user);
  location.assign(`${config.authorizeEndpoint}?${query}`);
}

function claimsOf(jwt) {
  try {
    const part = jwt.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    const text = atob(part + "=".repeat((4 - (part.length % 4)) % 4));
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(text, (c) => c.charCodeAt(0))));
  } catch {
    return {};
  }
}

// The redirect back from the authorize endpoint: ?code=&state= (or ?error=). Redeems the code with the
// PKCE verifier of the sign-in this tab started, then returns to the page the user was on. Returns false
// when this page load is not such an answer.
export async function completeSignIn() {
  const query = new URLSearchParams(location.search);
  if (!query.has("state") || !(query.has("code") || query.has("error"))) return false;
  const pending = read(PENDING);
  sessionStorage.removeItem(PENDING);
  history.replaceState(null, "", consoleBase()); // the code leaves the address bar and the history at once
  if (!pending || pending.state !== query.get("state")) {
    throw new SignInFailure("the answer does not belong to a sign-in started in this tab. Sign in again.");
  }
  if (query.has("error")) {
    throw new SignInFailure(`${query.get("error")}: ${query.get("error_description") || "no description"}`);
  }
  const config = signInConfig();
  let response;
  try {
    response = await fetch(config.tokenEndpoint, {
      method: "POST", credentials: "omit", cache: "no-store",
      body: new URLSearchParams({
        client_id: config.clientId, grant_type: "authorization_code", code: query.get("code"),
        redirect_uri: redirectUri(), code_verifier: pending.verifier, scope: `${config.scope} openid profile`,
      }),
    });
  } catch (error) {
    throw new SignInFailure(`the token endpoint could not be reached (${error.message}).`);
  }
  const answer = await response.json().catch(() => ({}));
  if (!response.ok || typeof answer.access_token !== "string") {
    throw new SignInFailure(answer.error_description || answer.error || `the token endpoint answered ${response.status}.`);
  }
  // The id token came straight from the token endpoint over TLS (OpenID Connect Core §3.1.3.7): it is read
  // for the user's name, after checking it answers this sign-in (nonce) and this client (aud).
  const identity = answer.id_token ? claimsOf(answer.id_token) : {};
  if (answer.id_token && (identity.nonce !== pending.nonce || identity.aud !== config.clientId)) {
    throw new SignInFailure("the identity token does not belong to this sign-in.");
  }
  const lifetime = Number(answer.expires_in) > 0 ? Number(answer.expires_in) : 3600;
  sessionStorage.setItem(SESSION, JSON.stringify({
    accessToken: answer.access_token, expiresAt: Date.now() + lifetime * 1000,
    user: identity.preferred_username || identity.email || identity.name || "",
  }));
  sessionStorage.removeItem(AUTO);
  history.replaceState(null, "", safeReturn(pending.returnTo));
  return true;
}

let leaving = null;

// The token for the next request. When the tab's token has expired it signs in again (once a minute at
// most, so a tenant that keeps answering with unusable tokens cannot make the page bounce forever); the
// promise given to this and every concurrent request then never settles: the page is leaving.
export async function bearer() {
  const token = currentToken();
  if (token || !session()) return token;
  if (leaving) return leaving;
  const last = Number(sessionStorage.getItem(AUTO) || 0);
  if (Date.now() - last > 60_000) {
    sessionStorage.setItem(AUTO, String(Date.now()));
    leaving = new Promise(() => {});
    await signIn();
    dropSession();
    return leaving;
  }
  dropSession();
  return null;
}

export function signOut() {
  const config = signInConfig();
  dropSession();
  sessionStorage.removeItem(PENDING);
  const query = new URLSearchParams({ client_id: config.clientId, post_logout_redirect_uri: redirectUri() });
  location.assign(`${config.logoutEndpoint}?${query}`);
}
