extension ViewerAssets {
    /// `monitor.js`: the Monitor tab. The namespace's operations as clients make them, from
    /// the profiler's stream (`/.settings/profile.json`), newest first: the last 500 kept,
    /// refusals in red, reads no index serves marked. The stream is open only while the tab
    /// shows and is not paused.
    static let monitor = #"""
    "use strict";
    Rtdb.monitor = (function () {
      const R = Rtdb;
      const kept = 500;
      const body = document.querySelector("#monitor tbody");
      const count = document.getElementById("monitor-count");
      const pause = document.getElementById("monitor-pause");
      let stream = null;
      let paused = false;
      let seen = 0;
      let dropped = 0;

      function time(ms) {
        const at = new Date(ms);
        const two = (n) => String(n).padStart(2, "0");
        return two(at.getHours()) + ":" + two(at.getMinutes()) + ":" + two(at.getSeconds()) + "." + String(at.getMilliseconds()).padStart(3, "0");
      }

      function query(entry) {
        const set = Array.isArray(entry.querySet) ? entry.querySet[0] : null;
        if (!set) return "";
        const params = Object.entries(set.params || {}).filter(([key]) => key !== "i").map(([key, v]) => key + "=" + JSON.stringify(v));
        return ["orderBy " + set.orderBy].concat(params).join(" ");
      }

      function add(entry) {
        seen++;
        const row = document.createElement("tr");
        if (entry.allowed === false) row.className = "denied";
        else if (entry.unIndexed) row.className = "unindexed";
        const client = entry.client ? (entry.client.owner ? "owner " : "") + entry.client.id + " " + entry.client.remoteAddress : "";
        const micros = entry.micros !== undefined ? entry.micros : entry.millis !== undefined ? Math.round(entry.millis * 1000) : "";
        const flags = [entry.allowed === false ? "denied" : "", entry.unIndexed ? "unindexed" : ""].filter(Boolean).join(" ");
        const cells = [time(entry.timestamp), entry.name, "/" + (entry.path || []).join("/"), query(entry),
                       entry.bytes === undefined ? "" : String(entry.bytes), String(micros), client, flags];
        row.replaceChildren(...cells.map((text, i) => R.element("td", i === cells.length - 1 ? "flag" : "", text)));
        body.prepend(row);
        while (body.rows.length > kept) body.lastElementChild.remove();
      }

      function tally() {
        count.textContent = seen + (seen === 1 ? " operation" : " operations") + (dropped ? ", " + dropped + " dropped: the page read too slowly" : "") +
          (body.rows.length < seen ? "; the last " + body.rows.length + " shown" : "");
      }

      function open() {
        if (stream || paused) return;
        stream = new EventSource(R.target("/.settings/profile.json", {}));
        stream.addEventListener("open", () => {
          count.dataset.state = "open";
          if (!seen) count.textContent = "following the operations";
        });
        stream.addEventListener("log", (event) => {
          try { add(JSON.parse(event.data)); } catch (error) { return; }
          tally();
        });
        stream.addEventListener("dropped", (event) => {
          const n = parseInt(event.data, 10);
          if (n > 0) dropped += n;
          tally();
        });
        stream.onerror = () => { if (stream && stream.readyState === EventSource.CLOSED) count.textContent = "cannot follow the operations"; };
      }

      function close() {
        delete count.dataset.state;
        if (stream) stream.close();
        stream = null;
      }

      let showing = false;
      pause.addEventListener("click", () => {
        paused = !paused;
        pause.textContent = paused ? "Resume" : "Pause";
        if (paused) close(); else if (showing) open();
      });
      document.getElementById("monitor-clear").addEventListener("click", () => {
        body.replaceChildren();
        seen = 0;
        dropped = 0;
        tally();
      });

      return {
        shown() { showing = true; open(); },
        hidden() { showing = false; close(); },
      };
    })();
    """#
}
