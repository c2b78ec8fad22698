import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// How busy each stage of the write path was, summed over a run: what a benchmark prints to
/// say which stage sets the wall time before anything is changed for speed.
///
/// On only when the environment names `RTDB_STAGE_TIMES` (read once): off, a measured section
/// costs the check of a constant. On, each costs two reads of the monotonic clock and an
/// atomic add, about 50 ns: a few percent of a write, which the figures include.
///
/// A stage's time is wall-clock time from its start to its end on its thread: with more
/// threads ready to run than cores, it includes waiting for a core (a thread's own CPU time
/// costs a system call of about 600 ns to read here, more than most stages take). So the
/// report also gives the process's CPU time against what its cores could give: near 100%,
/// the run is bound by CPU as a whole rather than by one stage.
public enum StageClock {
    /// Set and not empty, as the program's other variables are read.
    public static let isOn = getenv("RTDB_STAGE_TIMES").map { $0.pointee != 0 } ?? false

    private final class Counter: Sendable {
        let nanoseconds = Atomic<Int>(0)
        let count = Atomic<Int>(0)
    }

    private static let counters = Stage.allCases.map { _ in Counter() }
    /// The process's CPU time at the last `reset`, in microseconds.
    private static let cpuAtReset = Atomic<Int>(0)

    /// The process's CPU time so far (user and system), in microseconds.
    private static func processCPUMicroseconds() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1_000_000 + usage.ru_utime.tv_usec + usage.ru_stime.tv_usec
    }

    /// Runs `body`, adding its time to `stage` when the clock is on.
    @inline(__always)
    public static func measure<T, E: Error>(_ stage: Stage, _ body: () throws(E) -> T) throws(E) -> T {
        let start = begin()
        defer { end(stage, since: start) }
        return try body()
    }

    /// The start of a measured section (0 when the clock is off), for `end`: where a closure
    /// around the section would not do (an actor's method measuring itself).
    @inline(__always)
    public static func begin() -> UInt64 {
        isOn ? DispatchTime.now().uptimeNanoseconds : 0
    }

    /// Adds the time since `start` (from `begin`) to `stage`.
    @inline(__always)
    public static func end(_ stage: Stage, since start: UInt64) {
        if isOn { add(stage, since: start) }
    }

    private static func add(_ stage: Stage, since start: UInt64) {
        let counter = counters[stage.rawValue]
        counter.nanoseconds.add(Int(DispatchTime.now().uptimeNanoseconds &- start), ordering: .relaxed)
        counter.count.add(1, ordering: .relaxed)
    }

    /// Starts the counts again from zero (a benchmark's next run).
    public static func reset() {
        cpuAtReset.store(processCPUMicroseconds(), ordering: .relaxed)
        for counter in counters {
            counter.nanoseconds.store(0, ordering: .relaxed)
            counter.count.store(0, ordering: .relaxed)
        }
    }

    /// The calling thread's CPU time so far, in seconds.
    public static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Each stage's busy time and count since the start, zero where nothing was measured.
    public static func totals() -> [(stage: Stage, seconds: Double, count: Int)] {
        Stage.allCases.map { stage in
            let counter = counters[stage.rawValue]
            return (stage, Double(counter.nanoseconds.load(ordering: .relaxed)) / 1e9, counter.count.load(ordering: .relaxed))
        }
    }

    /// The report: each stage that ran, grouped by where it runs, as seconds and as a share
    /// of `wall` (the run's elapsed time): a place near 100% is the one that sets it.
    /// The process's CPU time counts from the last `reset` (or the start).
    /// `mainThread`: the main thread's CPU time, when the run had a main actor (the shell).
    public static func report(wall: Double, label: String, mainThread: Double? = nil) -> String {
        let cpu = Double(processCPUMicroseconds() - cpuAtReset.load(ordering: .relaxed)) / 1e6
        let cores = max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        var lines = [String(format: "stages: %@: wall %.2f s, process CPU %.2f s (%.0f%% of %d cores); each stage's time on its thread (share of the wall time):",
                            label, wall, cpu, cpu / max(wall, 1e-9) / Double(cores) * 100, cores)]
        if let mainThread {
            lines.append(String(format: "stages:   main thread, all of it: %.0f%% — %.2f s of CPU", mainThread / max(wall, 1e-9) * 100, mainThread))
        }
        var places: [String] = []
        for stage in Stage.allCases where !places.contains(stage.place) { places.append(stage.place) }
        let totals = totals()
        for place in places {
            let stages = totals.filter { $0.stage.place == place && $0.count > 0 }
            guard !stages.isEmpty else { continue }
            let busy = stages.reduce(0) { $0 + $1.seconds }
            let parts = stages.map { String(format: "%@ %.2f s (%d, %.1f µs each)", $0.stage.name, $0.seconds, $0.count, $0.seconds / Double($0.count) * 1e6) }
            lines.append(String(format: "stages:   %@: %.0f%% — %@", place, busy / max(wall, 1e-9) * 100, parts.joined(separator: ", ")))
        }
        return lines.joined(separator: "\n")
    }
}
