/// The data viewer `rtdb serve` shows at `/`: one page, its style and its scripts, written
/// here and served from the binary. The page talks only to this server, through its REST
/// API, event streams and realtime protocol, as the owner. Its tabs:
/// - Data (`tree.js`, `import.js`): the tree opened node by node, 50 children at a time,
///   each open node a listen of one realtime connection (`live.js`), following changes live
///   (added green, changed yellow, removed red), edited in place;
/// - Query (`query.js`): a query's children in query order, live;
/// - Rules (`rules.js`): the namespace's rules edited, and what requests made of them;
/// - Monitor (`monitor.js`): the operations clients make, as they happen.
/// `common.js` holds what they share and `viewer.js` starts them.
enum ViewerAssets {
    /// What the page may load: only from this server, no inline script or style.
    static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// The scripts in the order the page runs them: each one uses those before it.
    static let scripts: [(name: String, text: String)] = [
        ("common.js", common), ("live.js", live), ("tree.js", tree), ("import.js", importer), ("query.js", query),
        ("rules.js", rules), ("monitor.js", monitor), ("viewer.js", main),
    ]

    /// The file at `path` (`/`, `/.viewer/NAME`): its bytes and type.
    static func file(at path: String) -> (body: [UInt8], type: String)? { files[path] }

    /// Every file by its path, its bytes made once: the handler asks of every request.
    private static let files: [String: (body: [UInt8], type: String)] = {
        let html = (body: Array(page.utf8), type: "text/html; charset=utf-8")
        var files = ["/": html, "/index.html": html,
                     "/.viewer/viewer.css": (Array(style.utf8), "text/css; charset=utf-8"),
                     "/.viewer/icon.svg": (Array(icon.utf8), "image/svg+xml")]
        for script in scripts { files["/.viewer/" + script.name] = (Array(script.text.utf8), "text/javascript; charset=utf-8") }
        return files
    }()

    static let page = #"""
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>rtdb</title>
    <link rel="stylesheet" href="/.viewer/viewer.css">
    <link rel="icon" href="/.viewer/icon.svg">
    """# + scripts.map { "<script src=\"/.viewer/\($0.name)\" defer></script>\n" }.joined() + #"""
    </head>
    <body>
    <header>
    <h1>rtdb</h1>
    <nav id="tabs">
    <button type="button" data-tab="data">Data</button>
    <button type="button" data-tab="query">Query</button>
    <button type="button" data-tab="rules">Rules</button>
    <button type="button" data-tab="monitor">Monitor</button>
    </nav>
    <label>database <select id="namespace"></select></label>
    <span id="status"></span>
    </header>
    <main>
    <section id="data-tab"><ul id="tree" class="tree"></ul></section>
    <section id="query-tab" hidden>
    <form id="query-form" autocomplete="off">
    <label>path <input name="path" value="/" size="24"></label>
    <label>order by <select name="order">
    <option value="key">key</option><option value="child">child</option>
    <option value="value">value</option><option value="priority">priority</option>
    </select></label>
    <input name="child" placeholder="child path, as a/b" size="14">
    <span class="bound"><select name="start">
    <option value="">from the first</option><option value="startAt">startAt</option>
    <option value="startAfter">startAfter</option><option value="equalTo">equalTo</option>
    </select><input name="startValue" placeholder="JSON value" size="10"><input name="startKey" placeholder="key (optional)" size="10"></span>
    <span class="bound"><select name="end">
    <option value="">to the last</option><option value="endAt">endAt</option><option value="endBefore">endBefore</option>
    </select><input name="endValue" placeholder="JSON value" size="10"><input name="endKey" placeholder="key (optional)" size="10"></span>
    <label><select name="limit">
    <option value="">no limit</option><option value="limitToFirst">first</option><option value="limitToLast">last</option>
    </select><input name="count" type="number" min="1" value="10" size="5"></label>
    <button type="submit">Run</button>
    </form>
    <p id="query-problem" class="problem"></p>
    <p id="query-request" class="request"></p>
    <table id="query-results" class="results"><thead></thead><tbody></tbody></table>
    </section>
    <section id="rules-tab" hidden>
    <div class="toolbar"><button type="button" id="rules-save">Save</button> <button type="button" id="rules-reload">Reload</button> <span id="rules-problem"></span></div>
    <textarea id="rules-text" spellcheck="false" rows="18"></textarea>
    <h2>Coverage <button type="button" id="coverage-refresh">Refresh</button></h2>
    <p id="coverage-summary"></p>
    <pre id="coverage"></pre>
    </section>
    <section id="monitor-tab" hidden>
    <div class="toolbar"><button type="button" id="monitor-pause">Pause</button> <button type="button" id="monitor-clear">Clear</button> <span id="monitor-count"></span></div>
    <table id="monitor" class="results"><thead><tr><th>time</th><th>operation</th><th>path</th><th>query</th><th>bytes</th><th>µs</th><th>client</th><th></th></tr></thead><tbody></tbody></table>
    </section>
    </main>
    </body>
    </html>
    """#

    /// The tab's icon: a tree's three nodes (a browser asks /favicon.ico otherwise).
    static let icon = #"""
    <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><path d="M4 3v10M4 8h6M4 13h6" stroke="#0b4f9c" stroke-width="1.5" fill="none"/><circle cx="4" cy="3" r="2" fill="#0b4f9c"/><circle cx="11" cy="8" r="2" fill="#1a7f37"/><circle cx="11" cy="13" r="2" fill="#1a7f37"/></svg>
    """#
}
