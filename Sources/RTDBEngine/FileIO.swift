#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin POSIX helpers for the store: whole writes, syncs, and directory listings.
public enum FileIO {
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600) throws -> Int32 {
        let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
        if fd < 0 { throw StoreError.io(operation: "open", path: path, errno: errno) }
        return fd
    }

    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw StoreError.io(operation: "write", path: path, errno: errno)
            }
            offset += n
        }
    }

    static func sync(_ fd: Int32, path: String) throws {
        if fdatasync(fd) != 0 { throw StoreError.io(operation: "sync", path: path, errno: errno) }
    }

    /// Makes a create, rename or unlink in `folder` durable.
    static func syncDirectory(_ folder: String) throws {
        let fd = try open(folder, O_RDONLY | O_DIRECTORY)
        defer { Glibc.close(fd) }
        if fsync(fd) != 0 { throw StoreError.io(operation: "sync", path: folder, errno: errno) }
    }

    static func readFile(_ path: String) throws -> [UInt8] {
        let fd = try open(path, O_RDONLY)
        defer { Glibc.close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw StoreError.io(operation: "stat", path: path, errno: errno) }
        var bytes = [UInt8](repeating: 0, count: Int(st.st_size))
        var offset = 0
        try bytes.withUnsafeMutableBytes { buf in
            while offset < buf.count {
                let n = Glibc.read(fd, buf.baseAddress! + offset, buf.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw StoreError.io(operation: "read", path: path, errno: errno)
                }
                if n == 0 { break }
                offset += n
            }
        }
        if offset < bytes.count { bytes.removeLast(bytes.count - offset) }
        return bytes
    }

    static func listDirectory(_ folder: String) throws -> [String] {
        guard let dir = opendir(folder) else { throw StoreError.io(operation: "list", path: folder, errno: errno) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Creates the folder and its parents (mode 0700 for the ones it makes).
    public static func makeDirectories(_ path: String) throws {
        var current = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            current += "/" + part
            if mkdir(current, 0o700) != 0 && errno != EEXIST {
                throw StoreError.io(operation: "create the folder", path: current, errno: errno)
            }
        }
    }
}
