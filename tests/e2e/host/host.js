/* A small MCP Apps host for the browser tests.

   It does what the spec asks of a host, and records everything it sees:
   - puts the view in <iframe sandbox="allow-scripts"> whose srcdoc carries the
     spec's default CSP (plus object-src/frame-src/base-uri) as a meta tag;
   - answers ui/initialize with the scenario's host context, sends nothing
     before ui/notifications/initialized, then plays the scenario (partial
     input, input, then a result or a cancellation);
   - answers tools/call from the scenario, resizes on size-changed, records
     notifications/message (the views report CSP violations that way);
   - can send host-context-changed and ui/resource-teardown on demand.
   Every message in either direction lands in window.host.log. */
(function () {
  "use strict";
  const DEFAULT_CSP = [
    "default-src 'none'",
    "script-src 'self' 'unsafe-inline'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "media-src 'self' data:",
    "connect-src 'none'",
    "object-src 'none'",
    "frame-src 'none'",
    "base-uri 'self'",
  ].join("; ");

  const host = {
    csp: DEFAULT_CSP,
    log: [],
    logs: [],
    frame: null,
    scenario: null,
    initialized: false,
    pending: new Map(),
    nextId: 9000,
  };

  function copy(value) { return value === undefined ? undefined : JSON.parse(JSON.stringify(value)); }
  function record(dir, msg) { host.log.push({ dir: dir, msg: copy(msg), at: performance.now() }); }
  function toView(msg) { record("host->view", msg); host.frame.contentWindow.postMessage(msg, "*"); }
  function reply(id, result) { toView({ jsonrpc: "2.0", id: id, result: result }); }
  function fail(id, code, message) { toView({ jsonrpc: "2.0", id: id, error: { code: code, message: message } }); }

  function withCsp(html) {
    const meta = '<meta http-equiv="Content-Security-Policy" content="' + DEFAULT_CSP + '">';
    if (!/<head[^>]*>/i.test(html)) throw new Error("the view has no <head> to put the CSP in");
    return html.replace(/<head[^>]*>/i, (tag) => tag + meta);
  }

  host.start = function (html, scenario) {
    host.scenario = scenario || {};
    host.log.length = 0;
    const slot = document.getElementById("slot");
    slot.replaceChildren();
    const frame = document.createElement("iframe");
    frame.setAttribute("sandbox", "allow-scripts");
    frame.setAttribute("title", "pm view");
    frame.srcdoc = withCsp(html);
    host.frame = frame;
    slot.appendChild(frame);
  };

  host.play = function () {
    const s = host.scenario;
    for (const args of s.partialInputs || []) host.notify("ui/notifications/tool-input-partial", { arguments: args });
    if (s.toolInput !== undefined) host.notify("ui/notifications/tool-input", { arguments: s.toolInput });
    if (s.toolResult !== undefined) host.notify("ui/notifications/tool-result", s.toolResult);
    else if (s.cancel !== undefined) host.notify("ui/notifications/tool-cancelled", s.cancel);
  };

  host.notify = function (method, params) {
    if (!host.initialized) throw new Error("a host sends nothing before ui/notifications/initialized");
    toView({ jsonrpc: "2.0", method: method, params: params });
  };

  host.request = function (method, params) {
    const id = host.nextId++;
    return new Promise((resolve) => {
      host.pending.set(id, resolve);
      toView({ jsonrpc: "2.0", id: id, method: method, params: params });
    });
  };

  window.addEventListener("message", (event) => {
    if (!host.frame || event.source !== host.frame.contentWindow) return;
    const msg = event.data;
    record("view->host", msg);
    if (!msg || msg.jsonrpc !== "2.0") return;
    if (msg.method === undefined) {
      const resolve = host.pending.get(msg.id);
      if (resolve) { host.pending.delete(msg.id); resolve(copy(msg)); }
      return;
    }
    const s = host.scenario;
    switch (msg.method) {
      case "ui/initialize":
        if (s.refuseInitialize) return fail(msg.id, -32000, "refused by the test host");
        return reply(msg.id, {
          protocolVersion: "2026-01-26",
          hostInfo: { name: "pm-test-host", version: "1.0.0" },
          hostCapabilities: s.hostCapabilities || {},
          hostContext: s.hostContext || {},
        });
      case "ui/notifications/initialized":
        host.initialized = true;
        if (s.autoplay !== false) host.play();
        return;
      case "ui/notifications/size-changed":
        if (typeof msg.params?.height === "number") host.frame.style.height = msg.params.height + "px";
        return;
      case "notifications/message":
        host.logs.push(copy(msg.params));
        return;
      case "tools/call": {
        const result = (s.toolCalls || {})[msg.params?.name];
        if (msg.id === undefined) return;
        return result ? reply(msg.id, result) : fail(msg.id, -32601, "the test host has no result for " + msg.params?.name);
      }
      case "ping":
        return reply(msg.id, {});
      default:
        if (msg.id !== undefined) fail(msg.id, -32601, "Method not found: " + msg.method);
    }
  });

  window.host = host;
})();
