extension ViewerAssets {
    /// The page's one style sheet.
    static let style = #"""
    body { font: 14px/1.5 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; margin: 0; color: #1d1d1f; background: #fff; }
    header { display: flex; gap: 1.5em; align-items: baseline; padding: .6em 1em; border-bottom: 1px solid #ddd; background: #f6f6f6; }
    h1 { font-size: 1.1em; margin: 0; }
    h2 { font-size: 1em; margin: 1em 0 .3em; }
    nav button { font: inherit; border: none; background: none; cursor: pointer; padding: .1em .5em; border-radius: 3px; }
    nav button.selected { background: #0b4f9c; color: #fff; }
    #status { color: #8a8a8a; }
    #status.error { color: #b00020; }
    main { padding: .5em 1em; }
    ul.tree { list-style: none; margin: 0; padding-left: 1.2em; }
    main ul#tree > li > ul.tree { padding-left: 1.2em; }
    #data-tab > ul.tree { padding-left: 0; }
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
    .tools { visibility: hidden; }
    .row:hover .tools, .row:focus-within .tools { visibility: visible; }
    .tools { margin-left: .6em; font-size: .85em; }
    .tools button, .tools a { font: inherit; border: none; background: none; cursor: pointer; color: #555; text-decoration: none; padding: 0 .3em; }
    .tools button:hover, .tools a:hover { text-decoration: underline; }
    input[type=number] { width: 5em; }
    .tools button.delete { color: #b00020; }
    .tools button.add { color: #1a7f37; }
    .form { margin: .2em 0 .2em 2.2em; white-space: normal; }
    input, select, textarea, button { font: inherit; }
    textarea { width: 100%; box-sizing: border-box; }
    .problem { color: #b00020; }
    .done { color: #1a7f37; }
    progress { width: 16em; vertical-align: middle; }
    #query-form { display: flex; flex-wrap: wrap; gap: .4em 1em; align-items: center; }
    .request { color: #666; word-break: break-all; }
    table.results { border-collapse: collapse; margin-top: .5em; }
    table.results th, table.results td { text-align: left; padding: .1em .8em .1em 0; vertical-align: top; }
    table.results th { color: #666; font-weight: normal; border-bottom: 1px solid #ddd; }
    table.results td.value { max-width: 60em; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
    tr.denied td { color: #b00020; }
    tr.unindexed td.flag { color: #a15c00; }
    .toolbar { margin: .3em 0; }
    #coverage span.never { color: #888; border-bottom: 2px dashed #bbb; }
    #coverage span.true { background: rgba(40,167,69,.14); border-bottom: 2px solid #28a745; }
    #coverage span.false { background: rgba(220,53,69,.12); border-bottom: 2px solid #dc3545; }
    #coverage span.both { background: rgba(255,193,7,.16); border-bottom: 2px solid #e0a800; }
    #coverage span.value { border-bottom: 2px solid #4a7bd0; }
    #coverage span.error { border-bottom: 2px wavy #dc3545; }
    #coverage { background: #fafafa; border: 1px solid #ddd; padding: .6em; }
    """#
}
