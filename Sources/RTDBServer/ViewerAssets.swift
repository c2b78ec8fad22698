/// The data viewer `rtdb serve` shows at `/`: one page, its style and its script, written
/// here and served from the binary. The page reads only from this server, through one event
/// stream of its REST API, as the owner: a tree opened node by node, 50 children at a time,
/// following changes live (added green, changed yellow, removed red).
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
    button.delete, button.add { font: inherit; border: none; background: none; cursor: pointer; visibility: hidden; }
    button.delete { color: #b00020; }
    button.add { color: #1a7f37; }
    .row:hover button.delete, .row:hover button.add { visibility: visible; }
    .adding { margin-left: 2.2em; }
    input.edit { font: inherit; }
    .problem { color: #b00020; }
    """#

    static let script = #"""
    "use strict";
    // The viewer: the root reads its first children (50 more at each "more") through one event
    // stream of this server's REST API, which sends them whole and then every change; a node
    // opened below shows what that stream holds (a browser keeps few connections to a server).
    // A change is shown highlighted for a moment.
    (function () {
      const pageSize = 50;
      const params = new URLSearchParams(location.search);
      const namespace = params.get("ns") || hostNamespace(location.hostname);
      const status = document.getElementById("status");

      // The namespace a host names, as the server reads it: NAME.localhost or the first label
      // of a longer name; "default" for an address or a plain name.
      function hostNamespace(host) {
        const labels = host.toLowerCase().split(".");
        const address = /^[0-9.]+$/.test(host) || host.startsWith("[") || host.includes(":");
        if (address || !(labels.length >= 3 || (labels.length === 2 && labels[1] === "localhost"))) return "default";
        return labels[0];
      }

      function say(text, error) {
        status.textContent = text;
        status.className = error ? "error" : "";
      }

      // The REST address of a path, as the owner, with `extra` parameters.
      function restAddress(path, extra) {
        const query = new URLSearchParams(Object.assign({ ns: namespace, auth: "owner" }, extra));
        const encoded = path.map(encodeURIComponent).join("/");
        return "/" + encoded + (encoded ? "/" : "") + ".json?" + query.toString();
      }

      // Writes `body` (JSON text) at `path` with `method`; the server's refusal, or null.
      async function write(method, path, body) {
        try {
          const response = await fetch(restAddress(path, {}), { method: method, body: body, headers: { "Content-Type": "application/json" } });
          if (response.ok) return null;
          const answer = await response.json().catch(() => ({}));
          return answer.error || ("the server answered " + response.status);
        } catch (error) {
          return "the server cannot be reached";
        }
      }

      // The stream of a path's first `limit` children.
      function windowAddress(path, limit) { return restAddress(path, { orderBy: '"$key"', limitToFirst: String(limit) }); }

      // The database's key order: keys that are 32-bit integers (leading zeros allowed) first,
      // by value, the shorter first when equal; then the rest by their UTF-16 code units.
      function integer(key) {
        if (!/^-?[0-9]+$/.test(key)) return null;
        const digits = key.replace(/^-/, "").replace(/^0+/, "");
        if (digits.length > 10) return null;
        const value = Number(key);
        return value >= -2147483648 && value <= 2147483647 ? value : null;
      }
      function compareKeys(a, b) {
        const ai = integer(a), bi = integer(b);
        if (ai !== null && bi !== null) {
          if (ai !== bi) return ai - bi;
          if (a.length !== b.length) return a.length - b.length;
        } else if (ai !== null) {
          return -1;
        } else if (bi !== null) {
          return 1;
        }
        return a < b ? -1 : a > b ? 1 : 0;
      }

      function isObject(value) { return value !== null && typeof value === "object"; }

      // Data as the database holds it: a list the server wrote as an array is an object of its
      // indexes, without the nulls that stand for indexes it does not have.
      function normalized(value) {
        if (!isObject(value)) return value;
        const object = {};
        for (const [key, child] of Object.entries(value)) {
          if (child !== null) object[key] = normalized(child);
        }
        return Object.keys(object).length ? object : null;
      }

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

      // Two values alike, whatever the order of their members.
      function same(a, b) {
        if (!isObject(a) || !isObject(b)) return a === b;
        const keys = Object.keys(a);
        if (keys.length !== Object.keys(b).length) return false;
        return keys.every((key) => key in b && same(a[key], b[key]));
      }

      class TreeNode {
        constructor(path, key, parent) {
          this.path = path;
          this.key = key;
          this.parent = parent;
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
          this.adder = document.createElement("button");
          this.adder.className = "add";
          this.adder.title = "add a child";
          this.adder.textContent = "+";
          this.adder.addEventListener("click", () => this.add());
          this.row.append(this.adder);
          if (parent) {
            const remove = document.createElement("button");
            remove.className = "delete";
            remove.title = "delete";
            remove.textContent = "×";
            remove.addEventListener("click", () => this.delete());
            this.row.append(remove);
          }
          this.editing = false;
          this.list = document.createElement("ul");
          this.list.className = "tree";
          this.more = document.createElement("button");
          this.more.className = "more";
          this.more.textContent = "more";
          this.more.addEventListener("click", () => {
            this.limit += pageSize;
            if (this.parent) this.show(this.value, false); else this.listen();
          });
          this.element.append(this.row, this.list);
          this.open = false;
        }

        expand() {
          this.open = true;
          this.toggle.textContent = "▾";
          // The root streams; a node below shows what its parent holds of it.
          if (this.parent) this.show(this.parent.value ? this.parent.value[this.key] : undefined, false); else this.listen();
        }

        close() {
          this.open = false;
          this.toggle.textContent = "▸";
          if (this.stream) this.stream.close();
          this.stream = null;
          for (const child of this.children.values()) child.close();
          this.children.clear();
          this.list.replaceChildren();
          this.more.remove();
          this.limit = pageSize;
          const shown = this.value;
          this.value = undefined;
          this.summarize(shown);
        }

        listen() {
          if (this.stream) this.stream.close();
          const stream = new EventSource(windowAddress(this.path, this.limit));
          this.stream = stream;
          let first = true;
          const apply = (kind, event) => {
            let message;
            try { message = JSON.parse(event.data); } catch (error) { return; }
            if (!message || typeof message.path !== "string") return;
            const parts = splitPath(message.path);
            let value = this.value;
            if (kind === "put") {
              value = setAt(value, parts, normalized(message.data));
            } else {
              for (const [relative, data] of Object.entries(message.data || {})) {
                value = setAt(value, parts.concat(splitPath(relative)), normalized(data));
              }
            }
            // The first value (and the first after a reconnection) is what is there, not a change.
            this.show(value, !first);
            first = false;
          };
          stream.addEventListener("open", () => { first = true; say("live"); });
          stream.addEventListener("put", (event) => apply("put", event));
          stream.addEventListener("patch", (event) => apply("patch", event));
          stream.addEventListener("cancel", () => { stream.close(); say("the rules no longer let the owner read this", true); });
          stream.addEventListener("auth_revoked", () => { stream.close(); say("the credential was refused", true); });
          stream.onerror = () => say(stream.readyState === EventSource.CLOSED ? "cannot read the database" : "reconnecting…", true);
        }

        // Shows `value`, what is there now; with `highlight`, rows that came, changed or went
        // since the last one flash, except those the window of the first children moved past.
        show(value, highlight) {
          const before = this.value;
          this.value = value;
          if (!isObject(value)) {
            for (const child of this.children.values()) child.close();
            this.children.clear();
            this.list.replaceChildren();
            this.detail.replaceChildren(" ", leaf(value));
            this.more.remove();
            return;
          }
          const all = Object.keys(value).sort(compareKeys);
          const keys = all.slice(0, this.limit);
          const full = all.length >= this.limit;
          const last = keys[keys.length - 1];
          const wasFull = isObject(before) && Object.keys(before).length >= this.limit;
          const oldKeys = isObject(before) ? Object.keys(before).sort(compareKeys) : [];
          const oldLast = oldKeys[Math.min(oldKeys.length, this.limit) - 1];
          this.detail.textContent = "";
          const shown = new Set(keys);
          for (const [key, child] of this.children) {
            if (shown.has(key)) continue;
            this.children.delete(key);
            child.close();
            // A key the window left behind is not a removal.
            if (highlight && !(key in value) && !(full && compareKeys(key, last) > 0)) {
              child.row.classList.add("removed");
              setTimeout(() => child.element.remove(), 1000);
            } else {
              child.element.remove();
            }
          }
          let previous = null;
          for (const key of keys) {
            let child = this.children.get(key);
            let flashed = null;
            if (!child) {
              child = new TreeNode(this.path.concat([key]), key, this);
              this.children.set(key, child);
              // A key the window took in as another left is not an addition.
              const came = !isObject(before) || !(key in before);
              if (highlight && came && !(wasFull && oldLast !== undefined && compareKeys(key, oldLast) > 0)) flashed = "added";
            } else if (highlight && !child.open && !same(isObject(before) ? before[key] : undefined, value[key])) {
              // An open node's own rows show what changed in it.
              flashed = "changed";
            }
            if (child.open) child.show(value[key], highlight); else child.summarize(value[key]);
            const at = previous ? previous.element.nextSibling : this.list.firstChild;
            if (child.element !== at) this.list.insertBefore(child.element, at);
            if (flashed) flash(child.row, flashed);
            previous = child;
          }
          if (full) this.list.after(this.more); else this.more.remove();
        }

        // The value as its parent's stream holds it now.
        current() { return this.parent && isObject(this.parent.value) ? this.parent.value[this.key] : undefined; }

        // A leaf's value edited in place: JSON, checked before it is written (PUT); a mistake
        // or the server's refusal is shown beside it, and Escape leaves it as it was.
        edit(value) {
          this.editing = true;
          const input = document.createElement("input");
          input.className = "edit";
          input.value = JSON.stringify(value);
          input.size = Math.max(8, Math.min(60, input.value.length + 2));
          const problem = document.createElement("span");
          problem.className = "problem";
          const done = () => { this.editing = false; this.summarize(this.current()); };
          input.addEventListener("keydown", async (event) => {
            if (event.key === "Escape") return done();
            if (event.key !== "Enter") return;
            try { JSON.parse(input.value); } catch (error) { problem.textContent = " " + error.message; return; }
            const refusal = await write("PUT", this.path, input.value);
            if (refusal) { problem.textContent = " " + refusal; return; }
            done();
          });
          this.detail.replaceChildren(" ", input, problem);
          input.focus();
        }

        // A child added: its key (none: a push id the server makes) and its JSON value, both
        // checked before the write (PUT at the key, or POST); Escape gives up.
        add() {
          if (this.form) return this.form.querySelector("input").focus();
          const form = document.createElement("div");
          form.className = "adding";
          const key = document.createElement("input");
          key.className = "key-input";
          key.placeholder = "key (empty: a push id)";
          const value = document.createElement("input");
          value.className = "value-input";
          value.placeholder = "JSON value";
          const problem = document.createElement("span");
          problem.className = "problem";
          form.append(key, " ", value, problem);
          const finish = () => { form.remove(); this.form = null; };
          const submit = async () => {
            const name = key.value;
            if (/[.$#\[\]\/\u0000-\u001f\u007f]/.test(name)) {
              problem.textContent = " a key may not contain . $ # [ ] / or a control character";
              return;
            }
            try { JSON.parse(value.value); } catch (error) { problem.textContent = " " + error.message; return; }
            const refusal = name ? await write("PUT", this.path.concat([name]), value.value) : await write("POST", this.path, value.value);
            if (refusal) { problem.textContent = " " + refusal; return; }
            finish();
            if (!this.open) this.expand();
          };
          for (const input of [key, value]) {
            input.addEventListener("keydown", (event) => {
              if (event.key === "Escape") finish();
              if (event.key === "Enter") submit();
            });
          }
          this.form = form;
          this.row.after(form);
          key.focus();
        }

        // Deletes the node; one with children only once confirmed.
        async delete() {
          const value = this.current();
          if (isObject(value)) {
            const count = Object.keys(value).length;
            if (!confirm("Delete /" + this.path.join("/") + " and its " + count + (count === 1 ? " child?" : " children?"))) return;
          }
          const refusal = await write("DELETE", this.path, null);
          if (refusal) say(refusal, true);
        }

        // A closed node shows its value: a leaf as it is (double-click edits it), an object by
        // its number of children.
        summarize(value) {
          if (this.open || this.editing) return;
          this.adder.style.display = isObject(value) || value === null || value === undefined ? "" : "none";
          if (isObject(value)) {
            this.toggle.style.visibility = "visible";
            const count = Object.keys(value).length;
            const text = document.createElement("span");
            text.className = "count";
            text.textContent = " {" + count + (count === 1 ? " child}" : " children}");
            this.detail.replaceChildren(text);
          } else {
            this.toggle.style.visibility = "hidden";
            const shown = leaf(value);
            shown.title = "double-click to edit";
            shown.addEventListener("dblclick", () => this.edit(value));
            this.detail.replaceChildren(" ", shown);
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

      const root = new TreeNode([], "/", null);
      root.element.id = "root";
      document.getElementById("tree").append(root.element);
      root.expand();
      namespaces();
    })();
    """#
}
