import Foundation

/// How a long command (import, export) shows its progress on standard error: a bar redrawn
/// in place at a terminal (bytes, rate, time left), a plain line every few seconds when
/// standard error is a file or a pipe, nothing with --quiet.
public enum ProgressStyle: Sendable {
    case bar
    case lines
    case none
}

@MainActor
final class ProgressMeter {
    private let style: ProgressStyle
    private let write: (String) -> Void
    private let width: Int
    private var label: String
    private var total: Int?
    private var started = Date()
    private var lastShown = Date.distantPast
    private var barShown = false
    /// Something counted beside the bytes ("12,000 keys").
    var detail = ""

    init(style: ProgressStyle, label: String, total: Int?, width: Int, write: @escaping (String) -> Void) {
        self.style = style
        self.label = label
        self.total = total
        self.width = width
        self.write = write
    }

    /// A new phase from zero (checking, then writing).
    func restart(label: String, total: Int?) {
        clear()
        self.label = label
        self.total = total
        started = Date()
        lastShown = .distantPast
    }

    /// `done` bytes so far; shown at most 10 times a second at a terminal, every 5 s otherwise.
    func update(_ done: Int) {
        let now = Date()
        switch style {
        case .none:
            return
        case .bar:
            guard now.timeIntervalSince(lastShown) >= 0.1 else { return }
            lastShown = now
            var line = "\r\u{1B}[K" + text(done, now: now, bar: true)
            if line.count > width + 6 { line = String(line.prefix(width + 6)) }
            write(line)
            barShown = true
        case .lines:
            if lastShown == .distantPast { lastShown = started }
            guard now.timeIntervalSince(lastShown) >= 5 else { return }
            lastShown = now
            write(text(done, now: now, bar: false) + "\n")
        }
    }

    /// Takes the bar off the line, so what follows starts clean.
    func clear() {
        if barShown { write("\r\u{1B}[K") }
        barShown = false
    }

    var elapsed: TimeInterval { Date().timeIntervalSince(started) }

    private func text(_ done: Int, now: Date, bar: Bool) -> String {
        let seconds = max(0.001, now.timeIntervalSince(started))
        let rate = Double(done) / seconds
        var parts = [label]
        if let total, total > 0 {
            let fraction = min(1, Double(done) / Double(total))
            if bar {
                let cells = 20
                let filled = Int(fraction * Double(cells))
                parts.append("[" + String(repeating: "#", count: filled) + String(repeating: ".", count: cells - filled) + "]")
            }
            parts.append("\(Int(fraction * 100))%")
            parts.append("\(Outline.humanBytes(done)) of \(Outline.humanBytes(total))")
        } else {
            parts.append(Outline.humanBytes(done))
        }
        if !detail.isEmpty { parts.append(detail) }
        parts.append("\(Outline.humanBytes(Int(rate)))/s")
        if let total, total > done, rate > 0 {
            parts.append("\(DurationWord.estimate(Double(total - done) / rate)) left")
        }
        return parts.joined(separator: "  ")
    }
}
