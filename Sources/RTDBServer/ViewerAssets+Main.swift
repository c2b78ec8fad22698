extension ViewerAssets {
    /// `viewer.js`: starts the page: the namespace picker (`/.inspect/databases.json`), the
    /// tabs (the address's `#query`, `#rules` or `#monitor` opens one), the tree.
    static let main = #"""
    "use strict";
    (function () {
      const R = Rtdb;
      const tabs = { data: null, query: Rtdb.query, rules: Rtdb.rules, monitor: Rtdb.monitor };
      let current = null;

      function showTab(name) {
        if (!Object.hasOwn(tabs, name)) name = "data";
        if (name === current) return;
        if (current && tabs[current]) tabs[current].hidden();
        current = name;
        for (const button of document.querySelectorAll("#tabs button")) button.classList.toggle("selected", button.dataset.tab === name);
        for (const tab of Object.keys(tabs)) document.getElementById(tab + "-tab").hidden = tab !== name;
        if (tabs[name]) tabs[name].shown();
      }

      async function namespaces() {
        const select = document.getElementById("namespace");
        try {
          const response = await fetch("/.inspect/databases.json");
          const list = await response.json();
          const names = list.map((entry) => entry.name);
          if (!names.includes(R.namespace)) names.unshift(R.namespace);
          for (const name of names) {
            const option = document.createElement("option");
            option.value = name;
            option.textContent = name;
            option.selected = name === R.namespace;
            select.append(option);
          }
        } catch (error) {
          R.say("cannot list the databases", true);
        }
        select.addEventListener("change", () => { location.search = "?ns=" + encodeURIComponent(select.value); });
      }

      for (const button of document.querySelectorAll("#tabs button")) {
        button.addEventListener("click", () => { location.hash = button.dataset.tab === "data" ? "" : button.dataset.tab; showTab(button.dataset.tab); });
      }
      window.addEventListener("hashchange", () => showTab(location.hash.slice(1)));
      R.live.start();
      R.tree.start();
      showTab(location.hash.slice(1));
      namespaces();
    })();
    """#
}
