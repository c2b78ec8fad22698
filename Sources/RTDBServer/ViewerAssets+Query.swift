extension ViewerAssets {
    /// `query.js`: the Query tab. The form makes a REST query (orderBy by key, child, value or
    /// priority; startAt, startAfter, equalTo, endAt, endBefore with an optional key; a limit
    /// from either end), read through one event stream with priorities (`format=export`), so
    /// the result follows changes. The stream holds the query's children; the page puts them
    /// in the query's order, as the database orders them.
    static let query = #"""
    "use strict";
    Rtdb.query = (function () {
      const R = Rtdb;
      const form = document.getElementById("query-form");
      const problem = document.getElementById("query-problem");
      const request = document.getElementById("query-request");
      const table = document.getElementById("query-results");
      let stream = null;
      let value = null;
      let order = null;
      let rows = new Map();

      // What the form asks: {path, items, order} or {mistake}.
      function read() {
        const f = form.elements;
        const items = {};
        const kind = f.order.value;
        const child = f.child.value.trim();
        if (kind === "child") {
          const parts = R.splitPath(child);
          if (!parts.length) return { field: f.child, mistake: "ordering by child needs the child's path, as score or stats/score" };
          for (const part of parts) {
            const wrong = R.keyProblem(part);
            if (wrong) return { field: f.child, mistake: wrong };
          }
          items.orderBy = JSON.stringify(parts.join("/"));
        } else {
          items.orderBy = JSON.stringify("$" + kind);
        }
        for (const [select, valueField, keyField] of [[f.start, f.startValue, f.startKey], [f.end, f.endValue, f.endKey]]) {
          if (!select.value) continue;
          const typed = valueField.value;
          let text = typed.trim();
          // Where the trimmed text starts in the field, to select a mistake where it is.
          let shift = typed.length - typed.trimStart().length;
          // A key query's bounds are keys: a bare word is taken as the string it spells.
          if (kind === "key" && text && !text.startsWith("\"")) { text = JSON.stringify(text); shift -= 1; }
          const mistake = R.jsonMistake(text);
          if (mistake) return { field: valueField, mistake: select.value + ": column " + (mistake.column + shift) + ": " + mistake.message, offset: Math.max(0, mistake.offset + shift) };
          if (keyField.value) text += "," + JSON.stringify(keyField.value);
          items[select.value] = text;
        }
        if (f.limit.value) {
          const count = Number(f.count.value);
          if (!Number.isInteger(count) || count < 1) return { field: f.count, mistake: "a limit is a whole number of at least 1" };
          items[f.limit.value] = String(count);
        }
        return { path: R.splitPath(f.path.value), items: items, order: { kind: kind, child: R.splitPath(child) } };
      }

      // A value without its priorities, and its priority.
      function plain(data) {
        if (!R.isObject(data)) return data;
        if (".value" in data) return data[".value"];
        const copy = R.dataObject();
        for (const [key, child] of Object.entries(data)) if (key !== ".priority") copy[key] = plain(child);
        return copy;
      }
      function priority(data) { return R.isObject(data) && ".priority" in data ? data[".priority"] : null; }

      // The database's order of values: nothing (null), false, true, numbers, strings (by
      // UTF-16 code units), objects; equal ones by key.
      function rank(v) {
        if (v === null || v === undefined) return 0;
        if (v === false) return 1;
        if (v === true) return 2;
        if (typeof v === "number") return 3;
        if (typeof v === "string") return 4;
        return 5;
      }
      function compareValues(a, b) {
        const ra = rank(a), rb = rank(b);
        if (ra !== rb) return ra - rb;
        if (ra === 3) return a - b;
        if (ra === 4) return a < b ? -1 : a > b ? 1 : 0;
        return 0;
      }
      // Priorities: none, then numbers, then strings.
      function comparePriorities(a, b) {
        const ra = a === null ? 0 : typeof a === "number" ? 1 : 2;
        const rb = b === null ? 0 : typeof b === "number" ? 1 : 2;
        if (ra !== rb) return ra - rb;
        if (ra === 1) return a - b;
        return a < b ? -1 : a > b ? 1 : 0;
      }
      function childAt(data, parts) {
        let v = plain(data);
        for (const part of parts) v = R.isObject(v) ? v[part] : undefined;
        return v;
      }
      // What a child is ordered by, as shown in the table's second column.
      function orderValue(data) {
        if (order.kind === "child") return childAt(data, order.child);
        if (order.kind === "value") return plain(data);
        if (order.kind === "priority") return priority(data);
        return undefined;
      }
      function compare(a, b) {
        let c = 0;
        if (order.kind === "priority") c = comparePriorities(priority(a[1]), priority(b[1]));
        else if (order.kind !== "key") c = compareValues(orderValue(a[1]), orderValue(b[1]));
        return c || R.compareKeys(a[0], b[0]);
      }

      function compact(data) {
        const text = data === undefined ? "" : JSON.stringify(data);
        return text.length > 300 ? text.slice(0, 300) + "…" : text;
      }

      function heading() {
        const row = document.createElement("tr");
        const names = ["#", "key"];
        if (order.kind === "child") names.push(order.child.join("/"));
        if (order.kind === "priority") names.push("priority");
        names.push("value");
        for (const name of names) row.append(R.element("th", "", name));
        table.tHead.replaceChildren(row);
      }

      // The result in the query's order; with `highlight`, what came, changed or went flashes.
      function render(before, highlight) {
        // The queried node's own priority (or a leaf's .value) is not a child.
        const entries = R.isObject(value) ? Object.entries(value).filter(([key]) => !key.startsWith(".")).sort(compare) : [];
        const body = table.tBodies[0];
        const next = new Map();
        entries.forEach(([key, data], index) => {
          let row = rows.get(key);
          const cells = [String(index + 1), key];
          if (order.kind === "child" || order.kind === "priority") cells.push(compact(orderValue(data)));
          cells.push(compact(plain(data)));
          let flashed = null;
          if (!row) {
            row = document.createElement("tr");
            row.dataset.key = key;
            if (highlight) flashed = "added";
          } else if (highlight && !R.same(R.isObject(before) ? before[key] : undefined, data)) {
            flashed = "changed";
          }
          row.replaceChildren(...cells.map((text, i) => R.element("td", i === cells.length - 1 ? "value" : "", text)));
          body.append(row);
          if (flashed) R.flash(row, flashed);
          next.set(key, row);
        });
        for (const [key, row] of rows) {
          if (next.has(key)) continue;
          if (highlight) {
            row.classList.add("removed");
            setTimeout(() => row.remove(), 1000);
          } else {
            row.remove();
          }
        }
        rows = next;
        problem.textContent = entries.length ? "" : "no children match";
      }

      function stop() {
        if (stream) stream.close();
        stream = null;
      }

      function run() {
        const asked = read();
        if (asked.mistake) {
          problem.textContent = asked.mistake;
          asked.field.focus();
          if (asked.offset !== undefined) asked.field.setSelectionRange(asked.offset, asked.offset + 1);
          return;
        }
        stop();
        problem.textContent = "";
        order = asked.order;
        value = null;
        for (const row of rows.values()) row.remove();
        rows = new Map();
        heading();
        const shown = new URLSearchParams(asked.items).toString().replace(/%22/g, "\"").replace(/%24/g, "$").replace(/%2C/g, ",").replace(/%2F/g, "/");
        request.textContent = "GET " + R.pathText(asked.path) + ".json?" + shown;
        stream = new EventSource(R.restAddress(asked.path, Object.assign({ format: "export" }, asked.items)));
        let first = true;
        const apply = (kind, event) => {
          let message;
          try { message = JSON.parse(event.data); } catch (error) { return; }
          if (!message || typeof message.path !== "string") return;
          const before = value;
          value = R.applyEvent(value, kind, message, true);
          render(before, !first);
          first = false;
        };
        stream.addEventListener("open", () => { first = true; });
        stream.addEventListener("put", (event) => apply("put", event));
        stream.addEventListener("patch", (event) => apply("patch", event));
        stream.addEventListener("cancel", () => { stop(); problem.textContent = "the rules no longer let the owner read this"; });
        stream.onerror = async () => {
          if (stream.readyState !== EventSource.CLOSED) return;
          // A stream refused (a bad query) says why only to a plain read of the same address.
          const answer = await R.send("GET", R.restAddress(asked.path, asked.items));
          problem.textContent = answer.error || "the query's stream ended";
        };
      }

      form.addEventListener("submit", (event) => { event.preventDefault(); run(); });
      form.elements.order.addEventListener("change", () => { form.elements.child.hidden = form.elements.order.value !== "child"; });
      form.elements.child.hidden = true;

      return {
        shown() { if (order) run(); },
        hidden() { stop(); },
      };
    })();
    """#
}
