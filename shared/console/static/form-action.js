// The job form's action parts, used for the action and for its error action: the action type and its
// fields (an HTTP request with method, URI, headers, body and authentication; a Storage queue message; a
// Service Bus queue or topic message) and the retry policy. Secrets are write-only: the API never returns
// them, so when editing their fields start empty and an empty field keeps the stored secret.

import { h } from "./dom.js";
import { duration, field, get, number, put, seconds, trimmed } from "./form-fields.js";

const TYPES = [["Http", "HTTP"], ["Https", "HTTPS"], ["StorageQueue", "Storage queue"],
  ["ServiceBusQueue", "Service Bus queue"], ["ServiceBusTopic", "Service Bus topic"]];
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"].map((m) => [m, m]);
const AUTH = [["", "None"], ["Basic", "Basic"], ["ClientCertificate", "Client certificate"],
  ["ActiveDirectoryOAuth", "Microsoft Entra ID (OAuth)"], ["ManagedIdentity", "The app's managed identity (extension)"]];
// What ManagedIdentity refuses (shared/lifecycle/validation.py): left over from another type, they are dropped.
const NOT_FOR_IDENTITY = ["secret", "password", "pfx", "username", "tenant"];
const TARGETS = ["request", "queueMessage", "serviceBusQueueMessage", "serviceBusTopicMessage"];
const kindOf = (type) => (/^https?$/i.test(type || "") ? "http" : (type || "").toLowerCase());

// What the API's enum casing turns back into the form's values ("http" -> "Http", "basic" -> "Basic").
function choice(value, choices) {
  const hit = choices.find(([v]) => v.toLowerCase() === String(value ?? "").toLowerCase());
  return hit ? hit[0] : "";
}

function secret(ctx, id, label, path) {
  return field(ctx, id, label, path, { type: "password", parse: trimmed, format: () => "",
    help: ctx.editing ? "Write-only: the API never returns it. Leave empty to keep the stored one." : null });
}

// Header rows edit the request's headers object (order kept); a row without a name is not sent.
function headers(ctx, base, idp) {
  const path = [...base, "request", "headers"];
  const rows = Object.entries(get(ctx.doc, path) || {});
  const list = h("div", { id: `${idp}-headers`, role: "group", "aria-label": "Headers" });
  const write = () => {
    const entries = rows.filter(([name]) => name.trim());
    put(ctx.doc, path, entries.length ? Object.fromEntries(entries.map(([n, v]) => [n.trim(), v])) : undefined);
    ctx.changed();
  };
  const draw = () => {
    list.replaceChildren(...rows.map((row, i) => {
      const name = h("input", { id: `${idp}-header-name-${i}`, value: row[0], "aria-label": `Header ${i + 1} name`,
        placeholder: "Name", autocomplete: "off", spellcheck: "false" });
      const value = h("input", { id: `${idp}-header-value-${i}`, value: row[1], "aria-label": `Header ${i + 1} value`,
        placeholder: "Value", autocomplete: "off", spellcheck: "false" });
      name.dataset.path = `${path.join(".")}`;
      name.addEventListener("input", () => { row[0] = name.value; write(); });
      value.addEventListener("input", () => { row[1] = value.value; write(); });
      const remove = h("button", { type: "button", class: "secondary", "aria-label": `Remove header ${i + 1}`,
        onclick: () => { rows.splice(i, 1); write(); draw(); } }, "Remove");
      return h("div", { class: "header-row" }, name, value, remove);
    }));
  };
  draw();
  return h("div", { class: "field" }, h("span", { class: "label" }, h("b", {}, "Headers")), list,
    h("div", {}, h("button", { type: "button", class: "secondary", id: `${idp}-add-header`,
      onclick: () => { rows.push(["", ""]); draw(); document.getElementById(`${idp}-header-name-${rows.length - 1}`).focus(); } },
    "Add header")));
}

function httpFields(ctx, base, idp) {
  const request = [...base, "request"];
  const auth = [...request, "authentication"];
  const authType = choice(get(ctx.doc, [...auth, "type"]), AUTH);
  const parts = [
    h("div", { class: "row" },
      field(ctx, `${idp}-method`, "Method", [...request, "method"], { choices: METHODS,
        format: (v) => choice(v, METHODS) || "GET" }),
      field(ctx, `${idp}-uri`, "URI", [...request, "uri"], { parse: trimmed, wide: true,
        placeholder: "https://example.com/ping" })),
    headers(ctx, base, idp),
    field(ctx, `${idp}-body`, "Body", [...request, "body"], { type: "textarea", className: "body",
      parse: (v) => (v === "" ? undefined : v) }),
    field(ctx, `${idp}-auth`, "Authentication", [...auth, "type"], { choices: AUTH, structural: true,
      format: () => authType, parse: (v) => {
        if (!v) put(ctx.doc, auth, undefined);
        if (v === "ManagedIdentity") NOT_FOR_IDENTITY.forEach((name) => put(ctx.doc, [...auth, name], undefined));
        return v || undefined;
      } }),
  ];
  if (authType === "Basic") {
    parts.push(h("div", { class: "row" }, field(ctx, `${idp}-username`, "User name", [...auth, "username"], { parse: trimmed }),
      secret(ctx, `${idp}-password`, "Password", [...auth, "password"])));
  } else if (authType === "ClientCertificate") {
    parts.push(field(ctx, `${idp}-pfx`, "Certificate (PFX, Base64)", [...auth, "pfx"], { type: "textarea", parse: trimmed,
      format: () => "", help: ctx.editing ? "Write-only: leave empty to keep the stored one." : null }),
    secret(ctx, `${idp}-pfx-password`, "Certificate password", [...auth, "password"]));
  } else if (authType === "ActiveDirectoryOAuth") {
    parts.push(h("div", { class: "row" },
      field(ctx, `${idp}-tenant`, "Tenant", [...auth, "tenant"], { parse: trimmed }),
      field(ctx, `${idp}-audience`, "Audience", [...auth, "audience"], { parse: trimmed }),
      field(ctx, `${idp}-client-id`, "Client id", [...auth, "clientId"], { parse: trimmed })),
    secret(ctx, `${idp}-secret`, "Client secret", [...auth, "secret"]));
  } else if (authType === "ManagedIdentity") {
    // No secret: the token is the Function app's own identity's, for an audience the deployment allows.
    parts.push(h("div", { class: "row" },
      field(ctx, `${idp}-audience`, "Audience", [...auth, "audience"], { parse: trimmed, placeholder: "api://target",
        help: "Allowed by the deployment's SCHEDULER_IDENTITY_AUDIENCES." }),
      field(ctx, `${idp}-client-id`, "Client id (user-assigned identity)", [...auth, "clientId"], { parse: trimmed,
        help: "Empty: the system-assigned identity." })));
  }
  return parts;
}

function queueFields(ctx, base, idp) {
  const message = [...base, "queueMessage"];
  return [h("div", { class: "row" },
    field(ctx, `${idp}-account`, "Storage account", [...message, "storageAccount"], { parse: trimmed }),
    field(ctx, `${idp}-queue`, "Queue", [...message, "queueName"], { parse: trimmed }),
    secret(ctx, `${idp}-sas-token`, "SAS token", [...message, "sasToken"])),
  field(ctx, `${idp}-message`, "Message", [...message, "message"], { type: "textarea", parse: (v) => (v === "" ? undefined : v) })];
}

function serviceBusFields(ctx, base, idp, topic) {
  const message = [...base, topic ? "serviceBusTopicMessage" : "serviceBusQueueMessage"];
  const auth = [...message, "authentication"];
  const keyName = (v) => {
    const name = trimmed(v);
    put(ctx.doc, [...auth, "type"], name ? "SharedAccessKey" : undefined);
    return name;
  };
  return [h("div", { class: "row" },
    field(ctx, `${idp}-namespace`, "Namespace", [...message, "namespace"], { parse: trimmed }),
    topic ? field(ctx, `${idp}-topic`, "Topic", [...message, "topicPath"], { parse: trimmed })
      : field(ctx, `${idp}-queue`, "Queue", [...message, "queueName"], { parse: trimmed }),
    field(ctx, `${idp}-transport`, "Transport", [...message, "transportType"], {
      choices: [["", "Default (NetMessaging)"], ["NetMessaging", "NetMessaging"], ["AMQP", "AMQP"]],
      format: (v) => choice(v, [["NetMessaging"], ["AMQP"]]), parse: (v) => v || undefined })),
  h("div", { class: "row" },
    field(ctx, `${idp}-key-name`, "Shared access key name", [...auth, "sasKeyName"], { parse: keyName }),
    secret(ctx, `${idp}-key`, "Shared access key", [...auth, "sasKey"])),
  field(ctx, `${idp}-message`, "Message", [...message, "message"], { type: "textarea", parse: (v) => (v === "" ? undefined : v) })];
}

const RETRY = [["", "Default: 4 retries, 30 s apart"], ["None", "None"], ["Fixed", "Fixed interval"],
  ["Exponential", "Exponential (extension)"]];

export function retryFields(ctx, base, idp, errorAction) {
  const path = [...base, "retryPolicy"];
  const kind = choice(get(ctx.doc, [...path, "retryType"]), RETRY);
  const choices = errorAction ? [["", "Default: none"], ...RETRY.slice(1)] : RETRY;
  const parts = [field(ctx, `${idp}-retry`, "Retry policy", [...path, "retryType"], { choices, structural: true,
    format: () => kind, parse: (v) => {
      // What the chosen policy does not have goes: None keeps no interval, Fixed no longest interval.
      const drop = !v ? ["retryInterval", "retryCount", "maxRetryInterval"] : v === "None"
        ? ["retryInterval", "retryCount", "maxRetryInterval"] : v === "Fixed" ? ["maxRetryInterval"] : [];
      for (const member of drop) put(ctx.doc, [...path, member], undefined);
      return v || undefined;
    } })];
  if (kind === "Fixed" || kind === "Exponential") {
    parts.push(h("div", { class: "row" },
      field(ctx, `${idp}-retry-interval`, kind === "Fixed" ? "Interval (seconds)" : "First interval (seconds)",
        [...path, "retryInterval"], { type: "number", parse: duration, format: seconds, inputmode: "numeric" }),
      field(ctx, `${idp}-retry-count`, "Retries", [...path, "retryCount"], { type: "number", parse: number }),
      kind === "Exponential" ? field(ctx, `${idp}-retry-max`, "Longest interval (seconds)", [...path, "maxRetryInterval"],
        { type: "number", parse: duration, format: seconds }) : null));
  }
  return parts;
}

// The action at `base` (["properties", "action"] or [..., "errorAction"]): its type and that type's fields.
export function actionFields(ctx, base, idp, errorAction = false) {
  const type = choice(get(ctx.doc, [...base, "type"]), TYPES) || "Http";
  const setType = (value) => {
    const kind = kindOf(value);
    const keep = { http: "request", storagequeue: "queueMessage", servicebusqueue: "serviceBusQueueMessage",
      servicebustopic: "serviceBusTopicMessage" }[kind];
    for (const member of TARGETS) if (member !== keep) put(ctx.doc, [...base, member], undefined);
    if (kind === "http" && !get(ctx.doc, [...base, "request", "method"])) put(ctx.doc, [...base, "request", "method"], "GET");
    return value;
  };
  const typeField = field(ctx, `${idp}-type`, errorAction ? "Error action type" : "Action type", [...base, "type"],
    { choices: TYPES, structural: true, format: () => type, parse: setType });
  const kind = kindOf(type);
  const fields = kind === "http" ? httpFields(ctx, base, idp) : kind === "storagequeue" ? queueFields(ctx, base, idp)
    : serviceBusFields(ctx, base, idp, kind === "servicebustopic");
  return [typeField, ...fields, ...retryFields(ctx, base, idp, errorAction)];
}
