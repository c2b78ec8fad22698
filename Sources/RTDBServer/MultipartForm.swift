import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A `multipart/form-data` body (RFC 7578), as a browser's `FormData` sends one: the upload of
/// the Emulator UI's JSON import. Only what a form of files needs: the parts, their names, and
/// their bytes as sent (no transfer encodings: browsers send none).
enum MultipartForm {
    struct Failure: Error {
        let message: String
    }

    /// The bytes of the field `name`, the first of that name.
    static func field(_ name: String, in body: [UInt8], contentType: String?) throws(Failure) -> [UInt8] {
        guard let contentType, let boundary = boundary(of: contentType) else {
            throw Failure(message: "an upload is a multipart/form-data body (Content-Type: multipart/form-data; boundary=…)")
        }
        let delimiter = Array(("--" + boundary).utf8)
        // Between parts the delimiter follows a CRLF; the first may open the body.
        let separator = Array("\r\n".utf8) + delimiter
        guard var position = find(delimiter, in: body, from: 0) else {
            throw Failure(message: "the form's boundary \"\(boundary)\" does not occur in the body")
        }
        position += delimiter.count
        while true {
            if body.count - position >= 2 && body[position] == 0x2D && body[position + 1] == 0x2D { break }  // "--": the end
            // Transport padding (spaces, tabs), then the CRLF that ends the delimiter line.
            while position < body.count, body[position] == 0x20 || body[position] == 0x09 { position += 1 }
            guard body.count - position >= 2, body[position] == 0x0D, body[position + 1] == 0x0A else {
                throw Failure(message: "the form is malformed at byte \(position): a boundary line does not end with CRLF")
            }
            position += 2
            // A part with no headers first: its blank line is the one right here.
            guard let headersEnd = emptyHeaders(body, position) ?? find(Array("\r\n\r\n".utf8), in: body, from: position) else {
                throw Failure(message: "the form is malformed at byte \(position): a part's headers do not end")
            }
            let headers = String(decoding: body[position..<headersEnd], as: UTF8.self)
            let contentStart = headersEnd == position ? position + 2 : headersEnd + 4
            guard let contentEnd = find(separator, in: body, from: contentStart) else {
                throw Failure(message: "the form is cut short: the part that starts at byte \(position) has no closing boundary")
            }
            if fieldName(headers) == name { return Array(body[contentStart..<contentEnd]) }
            position = contentEnd + separator.count
        }
        throw Failure(message: "the form has no field named \"\(name)\"")
    }

    /// A part with no headers: its blank line follows the boundary line at once.
    private static func emptyHeaders(_ body: [UInt8], _ position: Int) -> Int? {
        body.count - position >= 2 && body[position] == 0x0D && body[position + 1] == 0x0A ? position : nil
    }

    /// The `boundary` parameter of a `multipart/form-data` content type, unquoted.
    static func boundary(of contentType: String) -> String? {
        let parts = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.first?.lowercased() == "multipart/form-data" else { return nil }
        for parameter in parts.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "boundary" else { continue }
            var value = pair[1].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            // RFC 2046: 1 to 70 characters.
            return (1...70).contains(value.utf8.count) ? value : nil
        }
        return nil
    }

    /// The `name` of a part's `Content-Disposition: form-data; name="…"` header.
    static func fieldName(_ headers: String) -> String? {
        for line in headers.split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":"),
                  line[..<colon].trimmingCharacters(in: .whitespaces).lowercased() == "content-disposition" else { continue }
            for parameter in line[line.index(after: colon)...].split(separator: ";").dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard pair.count == 2, pair[0].lowercased() == "name" else { continue }
                let value = pair[1]
                if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { return String(value.dropFirst().dropLast()) }
                return value
            }
        }
        return nil
    }

    /// Where `needle` first occurs in `haystack` at or after `start`.
    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard start >= 0, start <= haystack.count, !needle.isEmpty else { return nil }
        return haystack.withUnsafeBytes { hay in
            needle.withUnsafeBytes { pin -> Int? in
                guard let base = hay.baseAddress, let pinBase = pin.baseAddress else { return nil }
                // Each occurrence of the needle's first byte (memchr), then the rest compared.
                var at = start
                while hay.count - at >= pin.count {
                    guard let found = memchr(base + at, Int32(pin[0]), hay.count - pin.count - at + 1) else { return nil }
                    let offset = base.distance(to: UnsafeRawPointer(found))
                    if memcmp(found, pinBase, pin.count) == 0 { return offset }
                    at = offset + 1
                }
                return nil
            }
        }
    }
}
