extension ViewerAssets {
    /// `tree.js`: the Data tab. Each open node listens (`live.js`) to its first 50 children
    /// in key order (50 more at each "more"), each cut to its number of children
    /// (`{".count": N}`, a query's `dp`), so an open node costs what it shows however big the
    /// data below it; the server sends a child again when anything below it changes. A change
    /// is highlighted for a moment. Each row edits: a leaf in place, an object's JSON whole, a
    /// child added or pushed, renamed or cloned (one guarded update), exported, imported
    /// into, deleted.
    static let tree = #"""
    "use strict";
    Rtdb.tree = (function () {
      const pageSize = 50;
      // An object's JSON is edited whole up to this size; a bigger one child by child.
      const editLimit = 1 << 20;
      const R = Rtdb;

      // A node's listen: its first `limit` children and one more (so "more" shows only when
      // there are more), each cut one level down.
      function windowQuery(limit) { return { i: ".key", l: limit + 1, vf: "l", dp: 1 }; }

      // `value` written with `priority` (JSON's form of a prioritized value): a leaf as
      // {".value", ".priority"}, an object or list with ".priority" among its children.
      function withPriority(value, priority) {
        if (priority === null || value === null) return value;
        if (!R.isObject(value)) return { ".value": value, ".priority": priority };
        const object = Object.assign(R.dataObject(), value);
        object[".priority"] = priority;
        return object;
      }

      // A value read as an export: {value, priority}.
      function unwrapped(exported) {
        if (!R.isObject(exported) || !(".priority" in exported)) return { value: exported, priority: null };
        const priority = exported[".priority"];
        if (".value" in exported) return { value: exported[".value"], priority: priority };
        const value = Object.assign(R.dataObject(), exported);
        delete value[".priority"];
        return { value: value, priority: priority };
      }

      // The words for a write refused because the value changed since it was read (412).
      const changedMeanwhile = "it changed since it was read (another client wrote it): Escape, and edit what is there now";

      class TreeNode {
        constructor(path, key, parent) {
          this.path = path;
          this.key = key;
          this.parent = parent;
          this.limit = pageSize;
          this.value = undefined;
          this.tag = null;
          this.children = new Map();
          this.editing = false;
          this.form = null;
          this.open = false;
          this.element = document.createElement("li");
          this.element.dataset.path = R.pathText(path);
          this.row = R.element("span", "row");
          this.toggle = R.element("span", "toggle", "▸");
          this.toggle.addEventListener("click", () => this.open ? this.close() : this.expand());
          this.label = R.element("span", "key", key);
          this.detail = document.createElement("span");
          this.tools = R.element("span", "tools");
          this.adder = this.tool("add", "add", "add a child (Enter writes it, Escape gives up)", () => this.add());
          if (parent) {
            this.tool("rename", "rename", "give it another key, in one update", () => this.relocate(true));
            this.tool("clone", "clone", "copy it to another key beside it", () => this.relocate(false));
          }
          this.exporter = R.element("a", "export", "export");
          this.exporter.title = "export as a JSON file";
          this.exporter.download = (parent ? key : "root") + ".json";
          this.exporter.href = R.restAddress(path, { format: "export", download: this.exporter.download });
          this.tools.append(this.exporter, " ");
          this.tool("import", "import", "write a JSON file here", () => this.importForm());
          if (parent) this.tool("delete", "delete", "delete it", () => this.delete());
          this.row.append(this.toggle, this.label, this.detail, " ", this.tools);
          this.list = R.element("ul", "tree");
          this.more = R.element("button", "more", "more");
          this.more.addEventListener("click", () => {
            this.limit += pageSize;
            this.listen();
          });
          this.element.append(this.row, this.list);
        }

        tool(className, text, title, action) {
          const button = R.element("button", className, text);
          button.type = "button";
          button.title = title;
          button.addEventListener("click", action);
          this.tools.append(button, " ");
          return button;
        }

        expand() {
          this.open = true;
          this.toggle.textContent = "▾";
          this.listen();
        }

        close() {
          this.open = false;
          this.toggle.textContent = "▸";
          if (this.tag) R.live.unlisten(this.tag);
          this.tag = null;
          for (const child of this.children.values()) child.close();
          this.children.clear();
          this.list.replaceChildren();
          this.more.remove();
          this.limit = pageSize;
          const shown = this.parent ? this.current() : this.value;
          this.value = undefined;
          this.summarize(shown);
        }

        listen() {
          if (this.tag) R.live.unlisten(this.tag);
          // The first value (and the first after a reconnection) is what is there, not a change.
          let first = true;
          this.tag = R.live.listen(this.path, windowQuery(this.limit), {
            data: (kind, parts, data) => {
              // The children an update names: changed even when their cut value is the same.
              let named = null;
              if (parts.length) named = [parts[0]];
              else if (kind === "patch" && R.isObject(data)) named = Object.keys(data).map((key) => R.splitPath(key)[0]);
              const value = R.applyEvent(this.value, kind, { path: parts.join("/"), data: data });
              // Now a leaf (or nothing): closed, to show what its parent's listen holds.
              if (this.parent && !R.isObject(value)) return this.close();
              this.show(value, !first, named);
              first = false;
            },
            refused: (why) => { this.tag = null; R.say(R.pathText(this.path) + ": " + why, true); },
            again: () => { first = true; },
          });
        }

        // Shows `value`, what is there now; with `highlight`, rows that came, changed or went
        // since the last one flash (those `named` changed even if they look the same),
        // except those the window of the first children moved past.
        show(value, highlight, named) {
          const before = this.value;
          this.value = value;
          if (!R.isObject(value)) {
            for (const child of this.children.values()) child.close();
            this.children.clear();
            this.list.replaceChildren();
            if (!this.editing) this.detail.replaceChildren(" ", R.leaf(value));
            this.more.remove();
            return;
          }
          const all = Object.keys(value).sort(R.compareKeys);
          const keys = all.slice(0, this.limit);
          const more = all.length > this.limit;
          const full = all.length >= this.limit;
          const last = keys[keys.length - 1];
          const wasFull = R.isObject(before) && Object.keys(before).length >= this.limit;
          const oldKeys = R.isObject(before) ? Object.keys(before).sort(R.compareKeys) : [];
          const oldLast = oldKeys[Math.min(oldKeys.length, this.limit) - 1];
          if (!this.editing) this.detail.textContent = "";
          const shown = new Set(keys);
          for (const [key, child] of this.children) {
            if (shown.has(key)) continue;
            this.children.delete(key);
            child.close();
            // A key the window left behind is not a removal.
            if (highlight && !(key in value) && !(full && R.compareKeys(key, last) > 0)) {
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
              const came = !R.isObject(before) || !(key in before);
              if (highlight && came && !(wasFull && oldLast !== undefined && R.compareKeys(key, oldLast) > 0)) flashed = "added";
            } else if (highlight && !child.open && ((named && named.includes(key)) || !R.same(R.isObject(before) ? before[key] : undefined, value[key]))) {
              // An open node's own rows show what changed in it.
              flashed = "changed";
            }
            if (!child.open) child.summarize(value[key]);
            const at = previous ? previous.element.nextSibling : this.list.firstChild;
            if (child.element !== at) this.list.insertBefore(child.element, at);
            if (flashed) R.flash(child.row, flashed);
            previous = child;
          }
          if (more) this.list.after(this.more); else this.more.remove();
        }

        // The value as its parent's listen holds it now (an object cut to its count).
        current() {
          if (!this.parent) return this.value;
          return R.isObject(this.parent.value) ? this.parent.value[this.key] : undefined;
        }

        // A form below the row (one at a time): `fields` then a problem line; Escape or
        // `finish` removes it.
        openForm(fields) {
          if (this.form) this.form.remove();
          const form = R.element("div", "form");
          const problem = R.element("span", "problem");
          form.append(...fields, problem);
          form.addEventListener("keydown", (event) => { if (event.key === "Escape") finish(); });
          const finish = () => { form.remove(); if (this.form === form) this.form = null; };
          this.form = form;
          this.row.after(form);
          return { form: form, problem: problem, finish: finish };
        }

        // A leaf's value edited in place: read again with its priority and ETag, JSON
        // checked before it is written (PUT, its priority kept, only if no one wrote it
        // meanwhile); a mistake is selected where it is, and it or the server's refusal is
        // said beside it; Escape leaves the value as it was.
        async edit() {
          if (this.editing) return;
          this.editing = true;
          const read = await R.readCapped(R.restAddress(this.path, { format: "export" }), editLimit, { "X-Firebase-ETag": "true" });
          let current = null;
          try { current = read.ok ? unwrapped(JSON.parse(read.text)) : null; } catch (error) { current = null; }
          const done = () => { this.editing = false; this.summarize(this.current()); };
          if (read.tooBig || (current && R.isObject(current.value))) { done(); return this.editObject(); }
          if (!current) { done(); return R.say(read.error || "cannot read " + R.pathText(this.path), true); }
          const input = R.element("input", "edit");
          input.value = JSON.stringify(current.value);
          input.size = Math.max(8, Math.min(60, input.value.length + 2));
          const problem = R.element("span", "problem");
          let busy = false;
          input.addEventListener("keydown", async (event) => {
            if (event.key === "Escape") return done();
            if (event.key !== "Enter" || busy) return;
            const mistake = R.jsonMistake(input.value);
            if (mistake) return R.showMistake(input, problem, mistake);
            busy = true;
            const body = JSON.stringify(withPriority(JSON.parse(input.value), current.priority));
            const written = await this.writeUnchanged(body, read.etag, problem);
            busy = false;
            if (written) done();
          });
          this.detail.replaceChildren(" ", input, problem);
          input.focus();
        }

        // An object's JSON, with its priorities, edited whole and written as one PUT, only if
        // no one wrote it since it was read. More than `editLimit` of JSON is not fetched.
        async editObject() {
          if (this.form && this.form.classList.contains("object")) return;
          const tooBig = () => R.say(R.pathText(this.path) + " is more than " + R.size(editLimit) + " of JSON, too big to edit whole here: open it and edit its children, or export it", true);
          // With its priorities when it has any: an export writes lists as objects.
          let answer = await R.readCapped(R.restAddress(this.path, { format: "export", print: "pretty" }), editLimit, { "X-Firebase-ETag": "true" });
          if (answer.ok && !answer.text.includes('".priority":')) {
            answer = await R.readCapped(R.restAddress(this.path, { print: "pretty" }), editLimit, { "X-Firebase-ETag": "true" });
          }
          if (answer.tooBig) return tooBig();
          if (!answer.ok) return R.say(answer.error, true);
          const text = R.element("textarea", "object-edit");
          text.value = answer.text;
          text.spellcheck = false;
          text.rows = Math.min(20, answer.text.split("\n").length + 1);
          const save = R.element("button", "save", "Save");
          save.type = "button";
          const hint = R.element("span", "count", " Ctrl+Enter saves, Escape gives up");
          const { form, problem, finish } = this.openForm([text, save, hint, document.createElement("br")]);
          form.classList.add("object");
          let busy = false;
          const submit = async () => {
            if (busy) return;
            const mistake = R.jsonMistake(text.value);
            if (mistake) return R.showMistake(text, problem, mistake);
            busy = true;
            const written = await this.writeUnchanged(text.value, answer.etag, problem);
            busy = false;
            if (written) finish();
          };
          save.addEventListener("click", submit);
          text.addEventListener("keydown", (event) => { if (event.key === "Enter" && event.ctrlKey) submit(); });
          text.focus();
        }

        // Writes `body` here (PUT) only if the value still has `etag`; whether it was, and in
        // `problem` why not.
        async writeUnchanged(body, etag, problem) {
          const answer = await R.send("PUT", R.restAddress(this.path, { print: "silent" }), body, { "if-match": etag });
          if (answer.ok) return true;
          problem.textContent = " " + (answer.status === 412 ? changedMeanwhile : answer.error);
          return false;
        }

        // A child added: its key (none: a push id the server makes) and its JSON value, both
        // checked before the write (PUT at the key, or POST).
        add() {
          const key = R.element("input", "key-input");
          key.placeholder = "key (empty: a push id)";
          const value = R.element("input", "value-input");
          value.placeholder = "JSON value";
          const { problem, finish } = this.openForm([key, " ", value]);
          let busy = false;
          const submit = async () => {
            if (busy) return;
            const name = key.value;
            const wrong = name ? R.keyProblem(name) : null;
            if (wrong) { problem.textContent = " " + wrong; return; }
            const mistake = R.jsonMistake(value.value);
            if (mistake) return R.showMistake(value, problem, mistake);
            busy = true;
            const refusal = name ? await R.write("PUT", this.path.concat([name]), value.value) : await R.write("POST", this.path, value.value);
            busy = false;
            if (refusal) { problem.textContent = " " + refusal; return; }
            finish();
            if (!this.open) this.expand();
          };
          for (const input of [key, value]) input.addEventListener("keydown", (event) => { if (event.key === "Enter") submit(); });
          key.focus();
        }

        // Renamed (`move`) or cloned to a new key beside it, as the shell's mv and cp: the value
        // (with its priorities) and the new key's emptiness are read with their ETags, and one
        // update of the parent writes the copy (and removes the original) only if neither
        // changed since (rtdb's guarded PATCH). Another client's write in between is said, and
        // nothing is written.
        relocate(move) {
          const input = R.element("input", "key-input");
          input.value = move ? this.key : this.key + "-copy";
          const label = R.element("span", "count", move ? "rename to " : "clone as ");
          const { problem, finish } = this.openForm([label, input]);
          let busy = false;
          input.addEventListener("keydown", async (event) => {
            if (event.key !== "Enter" || busy) return;
            busy = true;
            try { await this.relocateTo(input.value, move, problem, finish); } finally { busy = false; }
          });
          input.focus();
          input.select();
        }

        // One rename or clone to `name`; what stops it is said in `problem`.
        async relocateTo(name, move, problem, finish) {
          const wrong = R.keyProblem(name);
          if (wrong) { problem.textContent = " " + wrong; return; }
          if (name === this.key) { problem.textContent = " that is its name now"; return; }
          const source = await R.send("GET", R.restAddress(this.path, { format: "export" }), undefined, { "X-Firebase-ETag": "true" });
          if (!source.ok) { problem.textContent = " " + source.error; return; }
          if (source.etag === "null_etag") { problem.textContent = " " + R.pathText(this.path) + " holds nothing now"; return; }
          const target = this.parent.path.concat([name]);
          const existing = await R.send("GET", R.restAddress(target, { shallow: "true" }), undefined, { "X-Firebase-ETag": "true" });
          if (!existing.ok) { problem.textContent = " " + existing.error; return; }
          if (existing.etag !== "null_etag") { problem.textContent = " " + R.pathText(target) + " already exists: delete it first, or choose another key"; return; }
          let body = "{" + JSON.stringify(name) + ":" + source.text;
          if (move) body += "," + JSON.stringify(this.key) + ":null";
          body += "}";
          const guards = R.dataObject();
          guards[this.key] = source.etag;
          guards[name] = "null_etag";
          const answer = await R.send("PATCH", R.restAddress(this.parent.path, { print: "silent" }), body, { "X-Rtdb-Guards": R.asciiJSON(guards) });
          if (answer.status === 412) {
            problem.textContent = " nothing was written: " + answer.error + "; try again to " + (move ? "rename" : "clone") + " what is there now";
            return;
          }
          if (!answer.ok) { problem.textContent = " " + answer.error; return; }
          finish();
        }

        importForm() {
          const file = R.element("input", "file-input");
          file.type = "file";
          file.accept = ".json,application/json";
          const merge = document.createElement("input");
          merge.type = "checkbox";
          merge.className = "merge-input";
          const mergeLabel = R.element("label", "", " merge ");
          mergeLabel.prepend(merge);
          mergeLabel.title = "replace only the children the file names, as update does";
          const start = R.element("button", "start", "Import");
          start.type = "button";
          const progress = document.createElement("progress");
          progress.hidden = true;
          const said = R.element("span", "said");
          const { problem, finish } = this.openForm([R.element("span", "count", "import into " + R.pathText(this.path) + " "), file, mergeLabel, start, " ", progress, said, " "]);
          start.addEventListener("click", async () => {
            if (!file.files.length) { problem.textContent = "choose a JSON file first"; return; }
            start.disabled = true;
            problem.textContent = "";
            progress.hidden = false;
            const result = await Rtdb.importer.run(file.files[0], this.path, merge.checked, (text, done, total) => {
              said.textContent = " " + text;
              progress.max = total || 1;
              progress.value = done;
            });
            start.disabled = false;
            if (result.error) { problem.textContent = result.error; said.textContent = ""; progress.hidden = true; return; }
            said.className = "said done";
            said.textContent = " " + result.summary;
            if (!this.open) this.expand();
          });
        }

        // Deletes the node; one with children only once confirmed.
        async delete() {
          const value = this.current();
          if (R.isObject(value)) {
            const count = R.childCount(value);
            if (!confirm("Delete " + R.pathText(this.path) + " and its " + count + (count === 1 ? " child?" : " children?"))) return;
          }
          const refusal = await R.write("DELETE", this.path, null);
          if (refusal) R.say(refusal, true);
        }

        // A closed node shows its value: a leaf as it is, an object by its number of children
        // (double-clicking either edits it).
        summarize(value) {
          // Nothing: a row on its way out keeps what it showed.
          if (this.open || this.editing || value === undefined) return;
          const object = R.isObject(value);
          this.adder.style.display = object || value === null || value === undefined ? "" : "none";
          this.toggle.style.visibility = object ? "visible" : "hidden";
          let shown;
          if (object) {
            const count = R.childCount(value);
            shown = R.element("span", "count", " {" + count + (count === 1 ? " child}" : " children}"));
            shown.addEventListener("dblclick", () => this.editObject());
          } else {
            shown = R.leaf(value);
            shown.addEventListener("dblclick", () => this.edit());
          }
          shown.title = "double-click to edit";
          this.detail.replaceChildren(object ? "" : " ", shown);
        }
      }

      let root = null;
      return {
        start() {
          root = new TreeNode([], "/", null);
          root.element.id = "root";
          // The root stays open: closed, it would know only its window's size.
          root.toggle.style.visibility = "hidden";
          document.getElementById("tree").append(root.element);
          root.expand();
        },
      };
    })();
    """#
}
