import Foundation
import RTDBData
import RTDBProtocol

/// The report `profile` prints from the operations it captured, in the tables
/// `firebase database:profile` prints: speed (read, write, broadcast, connect, disconnect,
/// unlisten), bandwidth (downloaded and uploaded bytes by path) and unindexed queries. Paths
/// with 25 or more siblings seen are collapsed into `$wildcard`, level by level (unless
/// `collapse` is off).
public struct ProfileReport: Sendable {
    /// A table: its column names and rows of text.
    public struct Table: Sendable, Equatable {
        public var title: String
        public var legend: [String]
        public var rows: [[String]]
        public var note: String?
    }

    public static let speedNote = "NOTE: Speeds are reported at millisecond resolution and are not the latencies that clients will see. Pending times are also reported at millisecond resolution. They approximate the interval of time between the instant a request is received and the instant it executes."
    public static let bandwidthNote = "NOTE: The numbers reported here are only estimates of the data payloads from read operations. They are NOT a valid measure of your bandwidth bill."
    static let collapseThreshold = 25

    /// Time, count and refusals of the operations at one path.
    struct Speed {
        var times = 0
        var millis = 0.0
        var rejected = 0

        mutating func add(_ record: OperationRecord) {
            times += 1
            millis += Double(record.micros) / 1000
            if record.allowed == false { rejected += 1 }
        }

        static func + (a: Speed, b: Speed) -> Speed {
            Speed(times: a.times + b.times, millis: a.millis + b.millis, rejected: a.rejected + b.rejected)
        }
    }

    /// Bytes and count of the operations at one path.
    struct Bandwidth {
        var times = 0
        var bytes = 0

        static func + (a: Bandwidth, b: Bandwidth) -> Bandwidth { Bandwidth(times: a.times + b.times, bytes: a.bytes + b.bytes) }
    }

    private(set) var operationCount = 0
    private var first: Double?
    private var last: Double?
    private var reads: [String: Speed] = [:], writes: [String: Speed] = [:], broadcasts: [String: Speed] = [:], unlistens: [String: Speed] = [:]
    private var connects = Speed(), disconnects = Speed()
    private var downloaded: [String: Bandwidth] = [:], uploaded: [String: Bandwidth] = [:]
    /// Unindexed queries: path, then the index named, then how many times.
    private var unindexed: [String: [String: Int]] = [:]

    public var collapse = true

    public init(collapse: Bool = true) { self.collapse = collapse }

    /// Counts one operation.
    public mutating func add(_ record: OperationRecord) {
        operationCount += 1
        first = first ?? record.timestamp
        last = record.timestamp
        let path = record.path?.description ?? "/"
        switch record.kind {
        case .connect: connects.add(record)
        case .disconnect: disconnects.add(record)
        case .realtimeRead, .restRead, .listen:
            reads[path, default: Speed()].add(record)
            downloaded[path, default: Bandwidth()] = downloaded[path, default: Bandwidth()] + Bandwidth(times: 1, bytes: record.bytes)
            if record.kind == .listen && record.unindexed {
                unindexed[path, default: [:]][Self.indexName(record.query), default: 0] += 1
            }
        case .realtimeWrite, .realtimeUpdate, .realtimeTransaction, .restWrite, .restUpdate:
            writes[path, default: Speed()].add(record)
            uploaded[path, default: Bandwidth()] = uploaded[path, default: Bandwidth()] + Bandwidth(times: 1, bytes: record.bytes)
        case .broadcast:
            broadcasts[path, default: Speed()].add(record)
            downloaded[path, default: Bandwidth()] = downloaded[path, default: Bandwidth()] + Bandwidth(times: 1, bytes: record.bytes)
        case .unlisten:
            unlistens[path, default: Speed()].add(record)
        }
    }

    /// The index a query reads, as its `orderBy` names it: `.value`, `.key`, a child path.
    static func indexName(_ query: QueryParams?) -> String {
        query?.index.description ?? ".value"
    }

    /// Milliseconds from the first operation to the last.
    public var totalMillis: Double { (last ?? 0) - (first ?? 0) }

    // MARK: Tables

    public var tables: [Table] {
        [speedTable("Read Speed", reads, denied: true), speedTable("Write Speed", writes, denied: true),
         speedTable("Broadcast Speed", broadcasts, denied: false), unpathedTable("Connect Speed", connects),
         unpathedTable("Disconnect Speed", disconnects), speedTable("Unlisten Speed", unlistens, denied: false),
         bandwidthTable("Downloaded Bytes", downloaded), bandwidthTable("Uploaded Bytes", uploaded), unindexedTable()]
    }

    private func speedTable(_ title: String, _ data: [String: Speed], denied: Bool) -> Table {
        // Slowest first.
        let sorted = collapsed(data, +).sorted { a, b in
            let (x, y) = (a.value.millis / Double(a.value.times), b.value.millis / Double(b.value.times))
            return x != y ? x > y : a.key < b.key
        }
        var legend = ["Path", "Count", "Average Execution Speed", "Average Pending Time"]
        if denied { legend.append("Permission Denied") }
        let rows = sorted.map { path, speed -> [String] in
            var row = [path, String(speed.times), Self.number(speed.millis / Double(speed.times)) + " ms", "0 ms"]
            if denied { row.append(Self.number(Double(speed.rejected))) }
            return row
        }
        return Table(title: title, legend: legend, rows: rows, note: Self.speedNote)
    }

    private func unpathedTable(_ title: String, _ speed: Speed) -> Table {
        let rows = speed.times == 0 ? [] : [[String(speed.times), Self.number(speed.millis / Double(speed.times)) + " ms", "0 ms"]]
        return Table(title: title, legend: ["Count", "Average Execution Speed", "Average Pending Time"], rows: rows, note: Self.speedNote)
    }

    private func bandwidthTable(_ title: String, _ data: [String: Bandwidth]) -> Table {
        // Most bytes first.
        let sorted = collapsed(data, +).sorted { a, b in a.value.bytes != b.value.bytes ? a.value.bytes > b.value.bytes : a.key < b.key }
        let rows = sorted.map { path, bandwidth -> [String] in
            [path, Self.bytes(Double(bandwidth.bytes)), Self.number(Double(bandwidth.times)),
                    Self.bytes(Double(bandwidth.bytes) / Double(bandwidth.times))]
        }
        return Table(title: title, legend: ["Path", "Total", "Count", "Average"], rows: rows, note: Self.bandwidthNote)
    }

    private func unindexedTable() -> Table {
        let rows = collapsed(unindexed) { a, b in a.merging(b, uniquingKeysWith: +) }.sorted { $0.key < $1.key }.flatMap { path, indexes in
            indexes.sorted { $0.key < $1.key }.map { index, count in [path, index, Self.number(Double(count))] }
        }
        return Table(title: "Unindexed Queries", legend: ["Path", "Index", "Count"], rows: rows, note: nil)
    }

    /// Paths whose parents had `collapseThreshold` or more children seen, the child replaced
    /// by `$wildcard` and their values combined; level by level, from the first.
    func collapsed<Value>(_ data: [String: Value], _ combine: (Value, Value) -> Value) -> [String: Value] {
        guard collapse else { return data }
        var current = data
        var level = 1
        while true {
            let split = current.map { (key: $0.key, segments: $0.key.split(separator: "/").map(String.init), value: $0.value) }
            let deeper = split.filter { $0.segments.count > level }
            if deeper.isEmpty { return current }
            var children: [String: Set<String>] = [:]
            for entry in deeper { children["/" + entry.segments.prefix(level).joined(separator: "/"), default: []].insert(entry.segments[level]) }
            var next: [String: Value] = [:]
            for entry in split {
                var key = entry.key
                if entry.segments.count > level {
                    let prefix = Array(entry.segments.prefix(level))
                    if (children["/" + prefix.joined(separator: "/")]?.count ?? 0) >= Self.collapseThreshold {
                        key = "/" + (prefix + ["$wildcard"] + entry.segments.dropFirst(level + 1)).joined(separator: "/")
                    }
                }
                next[key] = next[key].map { combine($0, entry.value) } ?? entry.value
            }
            current = next
            level += 1
        }
    }

    // MARK: Output

    /// The report as text, each table under its title with its columns aligned.
    public func text() -> String {
        var out = first.map { "Report operations collected from \(Self.iso($0)) over \(Self.number(totalMillis)) ms.\n" }
            ?? "Report of no operations: none was collected.\n"
        out += "Speed Report\n\n" + Self.speedNote + "\n\n"
        let all = tables
        for (i, table) in all.enumerated() {
            if i == 6 { out += "Bandwidth Report\n\n" + Self.bandwidthNote + "\n\n" }
            out += table.title + "\n" + Self.render(table) + "\n"
        }
        return out
    }

    /// The report as `firebase database:profile --json` shapes it.
    public var json: JSONValue {
        let names = ["readSpeed", "writeSpeed", "broadcastSpeed", "connectSpeed", "disconnectSpeed", "unlistenSpeed", "downloadedBytes",
                     "uploadedBytes", "unindexedQueries"]
        var members: [(String, JSONValue)] = [("totalTime", .number(totalMillis))]
        for (name, table) in zip(names, tables) {
            var fields: [(String, JSONValue)] = [("legend", .array(table.legend.map { .string($0) })),
                                                 ("data", .array(table.rows.map { .array($0.map { .string($0) }) }))]
            if let note = table.note { fields.append(("note", .string(note))) }
            members.append((name, .object(fields)))
        }
        return .object(members)
    }

    static func render(_ table: Table) -> String {
        let rows = [table.legend] + table.rows
        var widths = Array(repeating: 0, count: table.legend.count)
        for row in rows { for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) } }
        func line(_ row: [String]) -> String {
            row.enumerated().map { i, cell in i == row.count - 1 ? cell : cell.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
                .joined(separator: "  ") + "\n"
        }
        var out = line(table.legend)
        out += widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n"
        for row in table.rows { out += line(row) }
        if table.rows.isEmpty { out += "(none)\n" }
        return out
    }

    /// `1,234.5`: two decimals at most, none when they are zero, thousands separated.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let text = String(format: "%.2f", value)
        let parts = text.split(separator: ".", maxSplits: 1).map(String.init)
        var whole = parts[0]
        let negative = whole.hasPrefix("-")
        if negative { whole.removeFirst() }
        var grouped = ""
        for (i, digit) in whole.reversed().enumerated() {
            if i > 0 && i % 3 == 0 { grouped.append(",") }
            grouped.append(digit)
        }
        var result = (negative ? "-" : "") + String(grouped.reversed())
        if parts.count > 1, parts[1] != "00" { result += "." + parts[1] }
        return result
    }

    /// `512 B`, `1.5 kB`, `6.33 MB`: decimal units, as the profiler's report writes them.
    static func bytes(_ value: Double) -> String {
        if value.rounded() < 1000 { return number(value) + " B" }
        let units = ["kB", "MB", "GB", "TB", "PB"]
        var scaled = value / 1000
        var unit = 0
        while abs(scaled) >= 1000 && unit < units.count - 1 {
            scaled /= 1000
            unit += 1
        }
        return number(scaled) + " " + units[unit]
    }

    static func iso(_ millis: Double) -> String {
        Date(timeIntervalSince1970: millis / 1000).formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// The operations of a raw capture: one JSON object a line (what `profile --raw` writes),
    /// or a Server-Sent Events stream (`data: ` lines). Other lines are skipped; the number of
    /// lines that were not operations is returned beside them.
    public static func operations(inRaw text: String) -> (records: [OperationRecord], skipped: Int) {
        var records: [OperationRecord] = []
        var skipped = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            var body = line.trimmingCharacters(in: .whitespaces)
            if body.hasPrefix("event:") || body.hasPrefix(":") { continue }
            if body.hasPrefix("data:") { body = String(body.dropFirst(5)).trimmingCharacters(in: .whitespaces) }
            guard let json = try? JSONValue.parse(body), let record = OperationRecord(json: json) else {
                skipped += 1
                continue
            }
            records.append(record)
        }
        return (records, skipped)
    }
}
