import CSQLite

/// One SQLite connection, used from one queue: statements are prepared once and reused.
/// What SQLite reports becomes a `SQLiteError`; nothing here traps on what a file holds.
final class SQLiteDatabase {
    private var handle: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]

    /// A value bound to a statement's `?`.
    enum Value {
        case integer(Int64)
        case real(Double)
        case text(String)
        case blob([UInt8])
        case null
    }

    /// One result row; valid only inside the callback it is passed to.
    struct Row {
        fileprivate let statement: OpaquePointer

        func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
        func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }
        func real(_ column: Int32) -> Double { sqlite3_column_double(statement, column) }

        func text(_ column: Int32) -> String {
            guard let bytes = sqlite3_column_text(statement, column) else { return "" }
            let count = Int(sqlite3_column_bytes(statement, column))
            return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
        }

        func blob(_ column: Int32) -> [UInt8] {
            let count = Int(sqlite3_column_bytes(statement, column))
            guard count > 0, let bytes = sqlite3_column_blob(statement, column) else { return [] }
            return Array(UnsafeRawBufferPointer(start: bytes, count: count))
        }
    }

    /// Opens (creating) the database file at `path`.
    init(path: String) throws {
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK else {
            let error = SQLiteError(code: status, message: handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open")
            sqlite3_close(handle)
            handle = nil
            throw error
        }
        // Another connection (a second process sharing nothing) never blocks this one for long.
        sqlite3_busy_timeout(handle, 2000)
    }

    deinit { close() }

    func close() {
        for statement in statements.values { sqlite3_finalize(statement) }
        statements = [:]
        if let handle { sqlite3_close(handle) }
        handle = nil
    }

    /// Runs SQL without parameters or results (schema, pragmas, BEGIN/COMMIT).
    func execute(_ sql: String) throws {
        guard let handle else { throw SQLiteError(code: SQLITE_MISUSE, message: "the cache is closed") }
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard status == SQLITE_OK else {
            throw SQLiteError(code: status, message: message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle)))
        }
    }

    /// Runs one statement with `values` bound, calling `row` for each result row.
    func run(_ sql: String, _ values: [Value] = [], row: ((Row) throws -> Void)? = nil) throws {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (i, value) in values.enumerated() {
            let index = Int32(i + 1)
            let status: Int32
            switch value {
            case .integer(let v): status = sqlite3_bind_int64(statement, index, v)
            case .real(let v): status = sqlite3_bind_double(statement, index, v)
            case .text(let v): status = sqlite3_bind_text(statement, index, v, -1, rtdb_sqlite_transient())
            case .blob(let v):
                status = v.withUnsafeBytes { sqlite3_bind_blob64(statement, index, $0.baseAddress, sqlite3_uint64($0.count), rtdb_sqlite_transient()) }
            case .null: status = sqlite3_bind_null(statement, index)
            }
            guard status == SQLITE_OK else { throw error(status) }
        }
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { return }
            guard status == SQLITE_ROW else { throw error(status) }
            try row?(Row(statement: statement))
        }
    }

    /// The first column of the first row, as an integer (0 without rows).
    func integer(_ sql: String, _ values: [Value] = []) throws -> Int64 {
        var result: Int64 = 0
        var seen = false
        try run(sql, values) { row in
            if !seen { result = row.integer(0) }
            seen = true
        }
        return result
    }

    /// Whether a transaction is open (SQLite ends one itself on some errors).
    var inTransaction: Bool { handle.map { sqlite3_get_autocommit($0) == 0 } ?? false }

    /// Rows the last statement changed.
    var changes: Int { handle.map { Int(sqlite3_changes($0)) } ?? 0 }

    /// The first column of every row, as text.
    func strings(_ sql: String) throws -> [String] {
        var result: [String] = []
        try run(sql) { result.append($0.text(0)) }
        return result
    }

    /// The first two columns of every row, as text.
    func pairs(_ sql: String) throws -> [(String, String)] {
        var result: [(String, String)] = []
        try run(sql) { result.append(($0.text(0), $0.text(1))) }
        return result
    }

    private func prepared(_ sql: String) throws -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        guard let handle else { throw SQLiteError(code: SQLITE_MISUSE, message: "the cache is closed") }
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard status == SQLITE_OK, let statement else { throw error(status) }
        statements[sql] = statement
        return statement
    }

    private func error(_ status: Int32) -> SQLiteError {
        SQLiteError(code: status, message: handle.map { String(cString: sqlite3_errmsg($0)) } ?? "closed")
    }
}

/// What SQLite said went wrong.
struct SQLiteError: Error, CustomStringConvertible {
    let code: Int32
    let message: String

    /// The file is not a database, or its contents are damaged.
    var isDamage: Bool {
        let primary = code & 0xFF
        return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB || primary == SQLITE_FORMAT
    }

    var description: String { message }
}
