import Foundation
import RTDBEngine
import RTDBShell

/// `--recover`: opens each data folder in salvage mode and says, per folder, what was kept
/// and what was lost. Exit 0 when every folder opened; 3 when one could not be (in use, or
/// damaged beyond salvage).
enum Recover {
    static func run(folders: [String]) -> ExitStatus {
        var status = ExitStatus.success
        if folders.isEmpty { print("rtdb: no database to recover") }
        for folder in folders {
            let report = RecoveryReport()
            do {
                let store = try Store(folder: folder, salvage: report)
                store.close()
                print("\(folder): \(report.summary)")
            } catch {
                FileHandle.standardError.write(Data("rtdb: \(folder): cannot recover: \(error)\n".utf8))
                status = .unavailable
            }
        }
        return status
    }
}
