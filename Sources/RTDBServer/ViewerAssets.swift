/// The data viewer `rtdb serve` shows at `/`: one page, its style and its script, written
/// here and served from the binary. The page reads only from this server, through its REST
/// API and event streams, as the owner: a tree opened node by node, 50 children at a time,
/// each open node following its changes live (added green, changed yellow, removed red).
enum ViewerAssets {
    /// What the page may load: only from this server, no inline script or style.
    static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// The file at `path` (`/`, `/.viewer/viewer.js`, `/.viewer/viewer.css`): its bytes and type.
    static func file(at path: String) -> (body: [UInt8], type: String)? {
        switch path {
        case "/", "/index.html": return (Array(page.utf8), "text/html; charset=utf-8")
        case "/.viewer/viewer.js": return (Array(script.utf8), "text/javascript; charset=utf-8")
        case "/.viewer/viewer.css": return (Array(style.utf8), "text/css; charset=utf-8")
        case "/.viewer/icon.svg": return (Array(icon.utf8), "image/svg+xml")
        default: return nil
        }
    }

    static let page = #"""
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>rtdb</title>
    <link rel="stylesheet" href="/.viewer/viewer.css">
    <link rel="icon" href="/.viewer/icon.svg">
    <script src="/.viewer/viewer.js" defer></script>
    </head>
    <body>
    <header>
    <h1>rtdb</h1>
    <label>database <select id="namespace"></select></label>
    <span id="status"></span>
    </header>
    <main><ul id="tree" class="tree"></ul></main>
    </body>
    </html>
    """#

    /// The tab's icon: a tree's three nodes (a browser asks /favicon.ico otherwise).
    static let icon = #"""
    <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><path d="M4 3v10M4 8h6M4 13h6" stroke="#0b4f9c" stroke-width="1.5" fill="none"/><circle cx="4" cy="3" r="2" fill="#0b4f9c"/><circle cx="11" cy="8" r="2" fill="#1a7f37"/><circle cx="11" cy="13" r="2" fill="#1a7f37"/></svg>
    """#

    static let style = #"""
    body { font: 14px/1.5 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; margin: 0; color: #1d1d1f; background: #fff; }
    header { display: flex; gap: 1.5em; align-items: baseline; padding: .6em 1em; border-bottom: 1px solid #ddd; background: #f6f6f6; }
    h1 { font-size: 1.1em; margin: 0; }
    #status { color: #8a8a8a; }
    #status.error { color: #b00020; }
    main { padding: .5em 1em; }
    ul.tree { list-style: none; margin: 0; padding-left: 1.2em; }
    main > ul.tree { padding-left: 0; }
    li { white-space: nowrap; }
    .row { display: inline-block; padding: 0 .3em; border-radius: 3px; transition: background-color 1s; }
    .toggle { cursor: pointer; user-select: none; display: inline-block; width: 1em; color: #666; }
    .key { color: #0b4f9c; font-weight: 600; }
    .string { color: #1a7f37; }
    .number { color: #0a6e8a; }
    .boolean { color: #8a2be2; }
    .count { color: #8a8a8a; }
    .added { background: #c8f7c5; }
    .changed { background: #fff3b0; }
    .removed { background: #ffc9c9; text-decoration: line-through; }
    button.more { font: inherit; margin: .2em 0 .2em 1.2em; cursor: pointer; }
    """#

    static let script = #"""
    "use strict";
    // The viewer: each open node reads its first children (50 more at each "more") through an
    // event stream of this server's REST API, which sends the children as they are and then
    // every change; a change is shown highlighted for a moment.
    (function () {
      const pageSize = 50;
      const params = new URLSearchParams(location.search);
      const namespace = params.get("ns") || hostNamespace(location.hostname);

      // The namespace a host names, as the server reads it: NAME.localhost or the first label
      // of a longer name; "default" for an address or a plain name.
      function hostNamespace(host) {
        const labels = host.toLowerCase().split(".");
        const address = /^[0-9.]+$/.test(host) || host.startsWith("[") || host.includes(":");
        if (address || !(labels.length >= 3 || (labels.length === 2 && labels[1] === "localhost"))) return "default";
        return labels[0];
      }
      const status = document.getElementById("status");

      function say(text, error) {
        status.textContent = text;
        status.className = error ? "error" : "";
      }

      // The REST address of a path, with the query that keeps a node's first `limit` children.
      function address(path, limit) {
        const query = new URLSearchParams({ ns: namespace, auth: "owner", orderBy: '"$key"', limitToFirst: String(limit) });
        const encoded = path.map(encodeURIComponent).join("/");
        return "/" + encoded + (encoded ? "/" : "") + ".json?" + query.toString();
      }

      // Keys in the database's order: integers (as numbers) first, then the rest as text.
      function compareKeys(a, b) {
        const integer = /^-?(0|[1-9][0-9]{0,9})$/;
        const ai = integer.test(a), bi = integer.test(b);
        if (ai && bi) return Number(a) - Number(b) || (a < b ? -1 : a > b ? 1 : 0);
        if (ai) return -1;
        if (bi) return 1;
        return a < b ? -1 : a > b ? 1 : 0;
      }

      function isObject(value) { return value !== null && typeof value === "object"; }

      // The value at `parts` below `value`, set to `data` (null removes).
      function setAt(value, parts, data) {
        if (parts.length === 0) return data;
        const copy = isObject(value) ? Object.assign({}, value) : {};
        const [first, ...rest] = parts;
        const child = setAt(copy[first], rest, data);
        if (child === null || child === undefined) delete copy[first]; else copy[first] = child;
        return Object.keys(copy).length ? copy : null;
      }

      function splitPath(text) { return text.split("/").filter((part) => part.length > 0); }

      class TreeNode {
        constructor(path, key) {
          this.path = path;
          this.key = key;
          this.limit = pageSize;
          this.value = undefined;
          this.stream = null;
          this.children = new Map();
          this.element = document.createElement("li");
          this.element.dataset.path = "/" + path.join("/");
          this.row = document.createElement("span");
          this.row.className = "row";
          this.toggle = document.createElement("span");
          this.toggle.className = "toggle";
          this.toggle.textContent = "▸";
          this.toggle.addEventListener("click", () => this.open ? this.close() : this.expand());
          this.label = document.createElement("span");
          this.label.className = "key";
          this.label.textContent = key;
          this.detail = document.createElement("span");
          this.row.append(this.toggle, this.label, this.detail);
          this.list = document.createElement("ul");
          this.list.className = "tree";
          this.more = document.createElement("button");
          this.more.className = "more";
          this.more.textContent = "more";
          this.more.addEventListener("click", () => { this.limit += pageSize; this.listen(); });
          this.element.append(this.row, this.list);
          this.open = false;
        }

        expand() {
          this.open = true;
          this.toggle.textContent = "▾";
          this.listen();
        }

        close() {
          this.open = false;
          this.toggle.textContent = "▸";
          if (this.stream) this.stream.close();
          this.stream = null;
          for (const child of this.children.values()) child.close();
          this.children.clear();
          this.list.replaceChildren();
        }

        listen() {
          if (this.stream) this.stream.close();
          const stream = new EventSource(address(this.path, this.limit));
          this.stream = stream;
          this.first = true;
          const apply = (kind, event) => {
            let message;
            try { message = JSON.parse(event.data); } catch (error) { return; }
            if (!message || typeof message.path !== "string") return;
            const parts = splitPath(message.path);
            let value = this.value;
            if (kind === "put") {
              value = setAt(value, parts, message.data);
            } else {
              for (const [relative, data] of Object.entries(message.data || {})) {
                value = setAt(value, parts.concat(splitPath(relative)), data);
              }
            }
            this.show(value);
            say("live");
          };
          stream.addEventListener("put", (event) => apply("put", event));
          stream.addEventListener("patch", (event) => apply("patch", event));
          stream.addEventListener("cancel", () => say("the server stopped sending " + ("/" + this.path.join("/")) + " (the rules)", true));
          stream.addEventListener("auth_revoked", () => say("the credential was refused", true));
          stream.onerror = () => { if (stream.readyState === EventSource.CLOSED) say("cannot read " + ("/" + this.path.join("/")), true); };
        }

        // Shows `value` (what the stream holds now); rows that came, changed or went since the
        // last one are highlighted, except on the stream's first value.
        show(value) {
          const before = this.value;
          this.value = value;
          const highlight = !this.first;
          this.first = false;
          if (!isObject(value)) {
            for (const child of this.children.values()) child.close();
            this.children.clear();
            this.list.replaceChildren();
            this.detail.replaceChildren(" ", leaf(value));
            this.more.remove();
            return;
          }
          const keys = Object.keys(value).sort(compareKeys);
          this.detail.textContent = "";
          for (const [key, child] of this.children) {
            if (key in value) continue;
            this.children.delete(key);
            child.close();
            child.row.classList.add("removed");
            setTimeout(() => child.element.remove(), 1000);
          }
          let previous = null;
          for (const key of keys) {
            let child = this.children.get(key);
            const old = isObject(before) ? before[key] : undefined;
            if (!child) {
              child = new TreeNode(this.path.concat([key]), key);
              this.children.set(key, child);
              if (highlight) flash(child.row, "added");
            } else if (highlight && JSON.stringify(old) !== JSON.stringify(value[key])) {
              flash(child.row, "changed");
            }
            child.summarize(value[key]);
            const at = previous ? previous.element.nextSibling : this.list.firstChild;
            if (child.element !== at) this.list.insertBefore(child.element, at);
            previous = child;
          }
          if (keys.length >= this.limit) this.list.after(this.more); else this.more.remove();
        }

        // A closed child shows its value: a leaf as it is, an object by its number of children.
        summarize(value) {
          if (this.open) return;
          if (isObject(value)) {
            this.toggle.style.visibility = "visible";
            const count = Object.keys(value).length;
            const text = document.createElement("span");
            text.className = "count";
            text.textContent = " {" + count + (count === 1 ? " child}" : " children}");
            this.detail.replaceChildren(text);
          } else {
            this.toggle.style.visibility = "hidden";
            this.detail.replaceChildren(" ", leaf(value));
          }
        }
      }

      function leaf(value) {
        const span = document.createElement("span");
        span.className = typeof value;
        span.textContent = typeof value === "string" ? JSON.stringify(value) : String(value);
        return span;
      }

      function flash(element, kind) {
        element.classList.remove("added", "changed");
        element.classList.add(kind);
        setTimeout(() => element.classList.remove(kind), 1500);
      }

      async function namespaces() {
        const select = document.getElementById("namespace");
        try {
          const response = await fetch("/.inspect/databases.json");
          const list = await response.json();
          const names = list.map((entry) => entry.name);
          if (!names.includes(namespace)) names.unshift(namespace);
          for (const name of names) {
            const option = document.createElement("option");
            option.value = name;
            option.textContent = name;
            option.selected = name === namespace;
            select.append(option);
          }
        } catch (error) {
          say("cannot list the databases", true);
        }
        select.addEventListener("change", () => { location.search = "?ns=" + encodeURIComponent(select.value); });
      }

      const root = new TreeNode([], "/");
      root.element.id = "root";
      document.getElementById("tree").append(root.element);
      root.expand();
      namespaces();
    })();
    """#
}
