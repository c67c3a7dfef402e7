import FetchTestSupport
import Foundation
import Testing

@Suite("fetchlab run: device replay outputs")
struct DeviceRunTests {
  static let trace = """
    user,time,event,app,value
    u,0,begin,,+00:00
    u,100,open,a,10
    u,200,open,b,10
    u,60000,open,a,10
    u,86400,end,,

    """

  @Test("devices.csv has one row per (user, policy); a pair without scored opens warns on stderr")
  func devicesAndZeroOpensWarning() throws {
    let dir = scratch()
    try Self.trace.write(toFile: dir + "/t.csv", atomically: true, encoding: .utf8)
    let r = try CLI.run([
      "run", "--trace", dir + "/t.csv", "--policy", "never", "--policy", "periodic:1h,phase=0", "--train-fraction", "0.5",
      "--apps", "top:2", "--out", dir + "/out",
    ])
    #expect(r.status == 0, "\(r.stderr)")
    #expect(r.stderr.contains("warning: 2 (user, app, policy) pairs have no scored opens"), "\(r.stderr)")
    let devices = try String(contentsOfFile: dir + "/out/devices.csv", encoding: .utf8).split(separator: "\n")
    #expect(devices.count == 3)
    #expect(devices[0].hasPrefix("user,policy,apps,days,opens,fetches,energy_j_per_day"))
    #expect(devices[1].hasPrefix("u,never,2,"))
    #expect(devices[2].hasPrefix("u,\"periodic:1h,phase=0s\",2,"))
  }
}
