import FetchReports
import FetchTraces
import Foundation

/// Refuses a run directory whose `policies.csv` does not score the policies
/// its `manifest.json` lists (a file from another run, or edited): the
/// report would otherwise describe one run with another's numbers. Does
/// nothing when either file is missing or the manifest has no policy list
/// (a fit report); their own readers report those.
///
/// - Throws: ``CommandError`` naming both files and a policy in one only.
func checkPoliciesAgainstManifest(runDir: String) throws {
  let policiesPath = runDir + "/policies.csv", manifestPath = runDir + "/manifest.json"
  guard FileManager.default.fileExists(atPath: policiesPath),
    let d = FileManager.default.contents(atPath: manifestPath),
    let m = (try? JSONSerialization.jsonObject(with: d)) as? [String: Any], let listed = m["policies"] as? [String]
  else { return }
  let scored = Set(try RunReport.readPolicies(path: policiesPath).map(\.policy))
  let want = Set(listed)
  guard scored != want else { return }
  let detail =
    scored.subtracting(want).sorted().first.map { "it scores '\(escaped($0))', which the manifest does not list" }
    ?? "it does not score '\(escaped(want.subtracting(scored).sorted()[0]))', which the manifest lists"
  throw CommandError(
    "\(policiesPath): field policy: \(detail) (\(manifestPath), field policies): the two files are not of the same run; "
      + "run 'fetchlab run' again to write them together")
}
