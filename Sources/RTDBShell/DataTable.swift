import RTDBData

/// A command's JSON result as rows and columns, for `--format table|csv|tsv`.
///
/// The rows are the members of an object, in order, each with its key in the `.key` column;
/// the elements of a list; or a value that is neither, alone. A row's fields are its
/// object's members; a row that is not an object has its value in the `.value` column
/// (`.key` and `.value` cannot be keys of data, which have no dots). The columns are the
/// fields of the first `sampled` rows in the order they first appear: a table is printed as
/// it is read, and the first rows of data say its shape. Fields only later rows have are
/// counted in `unshown`, for a note that says so.
struct DataTable: Equatable {
    static let sampled = 100
    static let keyColumn = ".key"
    static let valueColumn = ".value"

    /// A field's value as a cell shows it.
    enum Cell: Equatable {
        /// A string, as it is (no quotes).
        case text(String)
        /// A number, as JSON writes it.
        case number(String)
        /// true, false, or an object or list as compact JSON.
        case json(String)

        init?(_ value: JSONValue) {
            switch value {
            case .null: return nil
            case .string(let text): self = .text(text)
            case .number: self = .number(value.serialized())
            case .bool, .array, .object: self = .json(value.serialized())
            }
        }

        var text: String {
            switch self {
            case .text(let text), .number(let text), .json(let text): return text
            }
        }
    }

    var columns: [String]
    /// One cell per column; nil where the row has no such field (or it is null).
    var rows: [[Cell?]]
    /// The fields rows after the first `sampled` have that no column shows, sorted, and
    /// how many rows have one.
    var unshown: [String] = []
    var rowsWithUnshown = 0

    /// The rows of one result: `value` is what the command prints with `--json`.
    init(_ value: JSONValue) {
        switch value {
        case .null: self.init(rows: [])
        case .object(let members): self.init(rows: members.map { (key: $0.0, value: $0.1) })
        case .array(let elements): self.init(rows: elements.map { (key: nil, value: $0) })
        default: self.init(rows: [(key: nil, value: value)])
        }
    }

    init(rows items: [(key: String?, value: JSONValue)]) {
        columns = DataTable.columns(of: items.prefix(DataTable.sampled))
        rows = []
        rows.reserveCapacity(items.count)
        var unshownFields = Set<String>()
        for item in items {
            let row = DataTable.row(item, columns: columns)
            rows.append(row.cells)
            if !row.unshown.isEmpty {
                rowsWithUnshown += 1
                unshownFields.formUnion(row.unshown)
            }
        }
        unshown = unshownFields.sorted()
    }

    /// `.key` first when rows have keys, then every field in the order it first appears.
    static func columns<C: Collection>(of items: C) -> [String] where C.Element == (key: String?, value: JSONValue) {
        var columns: [String] = []
        var seen = Set<String>()
        if items.contains(where: { $0.key != nil }) {
            columns.append(keyColumn)
            seen.insert(keyColumn)
        }
        for item in items {
            for name in fieldNames(item.value) where seen.insert(name).inserted { columns.append(name) }
        }
        return columns
    }

    /// A row's cells under `columns`, and the fields it has that no column shows.
    static func row(_ item: (key: String?, value: JSONValue), columns: [String]) -> (cells: [Cell?], unshown: [String]) {
        var fields: [String: Cell?] = [:]
        var order: [String] = []
        if let key = item.key { fields[keyColumn] = .text(key) }
        if case .object(let members) = item.value {
            for (name, value) in members {
                if fields.updateValue(Cell(value), forKey: name) == nil { order.append(name) }
            }
        } else {
            fields[valueColumn] = Cell(item.value)
            order.append(valueColumn)
        }
        let cells = columns.map { fields[$0] ?? nil }
        let shown = Set(columns)
        return (cells, order.filter { !shown.contains($0) })
    }

    private static func fieldNames(_ value: JSONValue) -> [String] {
        if case .object(let members) = value { return members.map(\.0) }
        return [valueColumn]
    }
}
