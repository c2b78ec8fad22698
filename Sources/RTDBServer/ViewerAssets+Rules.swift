extension ViewerAssets {
    /// `rules.js`: the Rules tab. The namespace's rules, edited and saved whole
    /// (`/.settings/rules.json`); the server checks them, and a mistake is selected at the
    /// line and column it names, with the old rules left in force. Below, the coverage report
    /// (`/.inspect/coverage.json`): the saved rules with each expression marked by what the
    /// requests since made of it (green only true, red only false or an error, amber both,
    /// grey never evaluated), its counts on hover.
    static let rules = #"""
    "use strict";
    Rtdb.rules = (function () {
      const R = Rtdb;
      const text = document.getElementById("rules-text");
      const problem = document.getElementById("rules-problem");
      const coverage = document.getElementById("coverage");
      const summary = document.getElementById("coverage-summary");
      let saved = null;

      function tell(message, error) {
        problem.textContent = message;
        problem.className = error ? "problem" : "done";
      }

      async function load() {
        const answer = await R.send("GET", R.target("/.settings/rules.json", {}));
        if (!answer.ok) return tell(answer.error, true);
        saved = answer.text;
        text.value = saved;
        tell("");
        refresh();
      }

      // The offset in `source` of a 1-based line and column (columns count characters).
      function offsetOf(source, line, column) {
        let offset = 0;
        for (let at = 1; at < line; at++) {
          const next = source.indexOf("\n", offset);
          if (next < 0) break;
          offset = next + 1;
        }
        const rest = Array.from(source.slice(offset)).slice(0, column - 1).join("");
        return offset + rest.length;
      }

      async function save() {
        const answer = await R.send("PUT", R.target("/.settings/rules.json", {}), text.value);
        if (answer.ok) {
          saved = text.value;
          tell("saved: the new rules are in force", false);
          return refresh();
        }
        // "LINE:COL: Parse error. WHAT; the rules were not changed"
        const at = /^(\d+):(\d+): Parse error\. (.*)$/s.exec(answer.error);
        if (!at) return tell(answer.error, true);
        const line = Number(at[1]), column = Number(at[2]);
        tell("line " + line + ", column " + column + ": " + at[3], true);
        const offset = offsetOf(text.value, line, column);
        text.focus();
        text.setSelectionRange(offset, Math.min(offset + 1, text.value.length));
      }

      // A part's counts in words: `true ×9, false ×5`, `never evaluated`, `error ×2 (…)`.
      function counts(part) {
        if (!part.evaluations) return "never evaluated";
        const pieces = Object.entries(part.values).map(([v, n]) => v + " ×" + n);
        if (part.otherValues) pieces.push("other values ×" + part.otherValues);
        if (part.errors) pieces.push("error ×" + part.errors + (part.lastError ? " (" + part.lastError + ")" : ""));
        return pieces.join(", ");
      }
      function kind(part) {
        if (!part.evaluations) return "never";
        const values = Object.keys(part.values);
        const yes = values.includes("true"), no = values.includes("false") || part.errors > 0;
        if (part.errors && !yes && values.length === 0) return "error";
        if (yes && no) return "both";
        if (yes && values.length === 1) return "true";
        if (no && values.every((v) => v === "false")) return "false";
        return "value";
      }

      async function refresh() {
        if (saved === null) return;
        const answer = await R.send("GET", R.target("/.inspect/coverage.json", {}));
        if (!answer.ok) { summary.textContent = answer.error; return; }
        let report;
        try { report = JSON.parse(answer.text); } catch (error) { summary.textContent = "the coverage report is not JSON"; return; }
        // Drawn over the source the report counted (the rules may have changed elsewhere).
        const source = typeof report.source === "string" ? report.source : saved;
        const scalars = Array.from(source);
        // Each character belongs to the innermost part over it.
        const owner = new Array(scalars.length).fill(null);
        const parts = report.rules.flatMap((rule) => rule.parts).filter((part) => part.start < part.end && part.end <= scalars.length);
        parts.sort((a, b) => (b.end - b.start) - (a.end - a.start));
        for (const part of parts) for (let i = part.start; i < part.end; i++) owner[i] = part;
        const pieces = [];
        let i = 0;
        while (i < scalars.length) {
          let j = i + 1;
          while (j < scalars.length && owner[j] === owner[i]) j++;
          const chunk = scalars.slice(i, j).join("");
          if (owner[i]) {
            const span = R.element("span", kind(owner[i]), chunk);
            span.title = owner[i].text + ": " + counts(owner[i]);
            pieces.push(span);
          } else {
            pieces.push(chunk);
          }
          i = j;
        }
        coverage.replaceChildren(...pieces);
        const evaluated = report.rules.filter((rule) => rule.evaluations > 0).length;
        summary.textContent = evaluated + " of " + report.rules.length + " rules evaluated since they were set";
      }

      document.getElementById("rules-save").addEventListener("click", save);
      document.getElementById("rules-reload").addEventListener("click", load);
      document.getElementById("coverage-refresh").addEventListener("click", refresh);
      text.addEventListener("keydown", (event) => { if (event.key === "Enter" && event.ctrlKey) save(); });

      return {
        shown() { if (saved === null) load(); else refresh(); },
        hidden() { },
      };
    })();
    """#
}
