import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

// The experiment's output directory: claiming it for one configuration,
// placing files atomically, and generated datasets.

/// Checks that `directory` (locked by the caller's ``ResultDirectory``)
/// holds nothing or this experiment; with `force`, clears another one.
/// A `parts/experiment.json` without any finished unit (left by a run that
/// failed early) is no conflict.
func claimDirectory(_ directory: String, hash: String, force: Bool, experiment e: Experiment) throws {
  let fm = FileManager.default
  let parts = directory + "/parts"
  func recordedHash(_ path: String) -> String?? {
    guard let d = fm.contents(atPath: path) else { return nil }
    let o = (try? JSONSerialization.jsonObject(with: d)) as? [String: Any]
    return .some(o?["config_hash"] as? String)
  }
  let marker = parts + "/experiment.json"
  var conflict: String?
  if let h = recordedHash(marker), h != hash, PartRecord.unitCount(parts) > 0 {
    conflict = "parts of a different experiment (configuration \(h.map { String($0.prefix(12)) } ?? "unknown"))"
  } else if let h = recordedHash(directory + "/manifest.json"), h != hash {
    conflict =
      h.map { "the results of a different experiment (configuration \(String($0.prefix(12))))" }
      ?? "the results of a 'run --trace'"
  }
  if let conflict, !force {
    throw ExperimentError(
      .directoryConflict,
      "\(directory) holds \(conflict), and this experiment's configuration is \(String(hash.prefix(12))): "
        + "choose another --out, or pass --force to replace them")
  }
  try fm.createDirectory(atPath: parts, withIntermediateDirectories: true)
  // The other experiment's results stay until this run's result replaces
  // them as a whole (ResultDirectory.commit); its parts go now.
  if conflict != nil || recordedHash(marker).map({ $0 != hash }) == true {
    for f in (try? fm.contentsOfDirectory(atPath: parts)) ?? [] {
      try fm.removeItem(atPath: parts + "/" + f)
    }
  }
  // Leftovers of an interrupted process (the lock is ours, so nobody else
  // writes here): temporary files and scratch dirs in parts/, temporary
  // files of generated datasets (the top level is cleaned by
  // ResultDirectory).
  for f in (try? fm.contentsOfDirectory(atPath: parts)) ?? [] where f.contains(".tmp-") || f.hasPrefix(".work-") || f == ".lock" {
    try? fm.removeItem(atPath: parts + "/" + f)
  }
  for f in (try? fm.contentsOfDirectory(atPath: directory + "/datasets")) ?? [] where f.contains(".tmp-") {
    try? fm.removeItem(atPath: directory + "/datasets/" + f)
  }
  if recordedHash(marker) == nil {
    let m = try AtomicTextFile(path: marker)
    let o: [String: Any] = ["config_hash": hash, "experiment": e.name, "path": e.path]
    try m.write(JSONText.pretty(o))
    try m.commit()
  }
}

/// Links or copies `from` to `to` via a temporary name and a rename.
func placeFile(from: String, to: String) throws {
  let fm = FileManager.default
  let tmp = to + ".tmp-\(getpid())"
  try? fm.removeItem(atPath: tmp)
  if link(from, tmp) != 0 {
    do {
      try fm.copyItem(atPath: from, toPath: tmp)
    } catch {
      throw ExperimentError("\(from): cannot copy to \(to): \(FileError.reason(error))")
    }
  }
  guard rename(tmp, to) == 0 else {
    let msg = String(cString: strerror(errno))
    try? fm.removeItem(atPath: tmp)
    throw ExperimentError("\(to): cannot rename into place: \(msg)")
  }
}

/// Generates a synthetic dataset into `directory/<name>.csv` unless the file
/// there was generated with the same settings and still has the SHA-256
/// recorded beside it (`<name>.json`); returns its path, size and SHA-256.
///
/// A valid file in one of `sources` (another run's `datasets/`) is linked
/// or copied instead of generating the dataset again.
func ensureSynthetic(
  _ s: Experiment.Dataset.Synthetic, directory: String, name: String, sources: [String] = []
) throws -> (path: String, bytes: Int, sha256: String) {
  let fm = FileManager.default
  try fm.createDirectory(atPath: directory, withIntermediateDirectories: true)
  let csv = directory + "/" + name + ".csv"
  let side = directory + "/" + name + ".json"
  let specText = try JSONText.canonical(s.spec)
  func valid(_ dir: String) -> (bytes: Int, hex: String)? {
    let csv = dir + "/" + name + ".csv"
    guard let d = fm.contents(atPath: dir + "/" + name + ".json"),
      let o = (try? JSONSerialization.jsonObject(with: d)) as? [String: Any],
      let recorded = o["spec"], JSONSerialization.isValidJSONObject(recorded),
      (try? JSONText.canonical(recorded)) == specText, let want = o["sha256"] as? String, fm.fileExists(atPath: csv),
      let got = try? SHA256.hashFile(atPath: csv), got.hex == want
    else { return nil }
    return (got.bytes, got.hex)
  }
  if let got = valid(directory) { return (csv, got.bytes, got.hex) }
  try? fm.removeItem(atPath: side)
  for source in sources where valid(source) != nil {
    try placeFile(from: source + "/" + name + ".csv", to: csv)
    try placeFile(from: source + "/" + name + ".json", to: side)
    if let got = valid(directory) { return (csv, got.bytes, got.hex) }
    try? fm.removeItem(atPath: side)
  }
  let population = SyntheticPopulation(seed: s.seed, days: s.days, parameters: s.parameters)
  try population.write(to: csv, users: s.users)
  let h = try SHA256.hashFile(atPath: csv)
  let m = try AtomicTextFile(path: side)
  let o: [String: Any] = ["spec": s.spec, "sha256": h.hex, "bytes": h.bytes]
  try m.write(JSONText.pretty(o))
  try m.commit()
  return (csv, h.bytes, h.hex)
}
