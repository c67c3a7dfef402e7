import Foundation
import Testing
import FetchTestSupport

@testable import FetchTraces

/// Large content in traces: an `update` row's value is the new item's size
/// (docs/trace-format.md, docs/background-transfers.md); the synthetic
/// population writes sizes only for apps that declare them.
@Suite("Large content in traces")
struct LargeContentTraceTests {
  @Test("an update's size is read, written back, and empty or 0 means no size")
  func roundTrip() throws {
    let path = tempFile(
      "user,time,event,app,value\nu1,10,begin,,UTC\nu1,11,update,pod,60000000\nu1,12,update,pod,\nu1,13,update,pod,0\nu1,20,end,,\n",
      name: "large.csv")
    let users = try readAll(path)
    #expect(users.count == 1)
    #expect(users[0].events.map(\.value) == [60_000_000, 0, 0])
    let out = Scratch.directory("large") + "/out.csv"
    let w = try TraceWriter(path: out)
    try w.write(users[0])
    try w.commit()
    let text = try String(contentsOfFile: out, encoding: .utf8)
    #expect(text.contains("u1,11,update,pod,60000000\n") && text.contains("u1,12,update,pod,\n"))
    #expect(try readAll(out)[0].events == users[0].events)
  }

  @Test("synthetic apps with a content size write lognormal sizes; the default pool writes none and draws as before")
  func syntheticSizes() throws {
    let plain = SyntheticPopulation(seed: 3, days: 5)
    for i in 0..<5 {
      #expect(plain.user(i).events.filter { $0.kind == .update }.allSatisfy { $0.value == 0 })
    }
    var p = SyntheticPopulation.Parameters()
    p.apps = [
      .init("chat", weight: 5, peakHour: 20, concentration: 0.3, updatesPerHour: 2),
      .init("podcasts", weight: 5, peakHour: 8, concentration: 0.5, updatesPerHour: 0.5, contentMedianBytes: 60e6, contentSigma: 0.5),
    ]
    p.appsPerUserMin = 2
    p.appsPerUserMax = 2
    let pop = SyntheticPopulation(seed: 3, days: 20, parameters: p)
    var sizes: [Double] = []
    for i in 0..<20 {
      let u = pop.user(i)
      let pod = u.apps.firstIndex(of: "podcasts").map(Int32.init)
      for e in u.events where e.kind == .update {
        if e.app == pod { sizes.append(e.value) } else { #expect(e.value == 0) }
      }
    }
    #expect(sizes.count > 50 && sizes.allSatisfy { $0 >= 1 && $0 == $0.rounded() })
    // The median of a lognormal is its median parameter.
    let m = sizes.sorted()[sizes.count / 2]
    #expect(m > 45e6 && m < 80e6, "median \(m)")
    // Sizes come from their own stream: the times equal a pool without sizes.
    var q = p
    q.apps[1].contentMedianBytes = 0
    let times = { (pop: SyntheticPopulation) in (0..<5).flatMap { pop.user($0).events.map(\.time) } }
    #expect(times(pop) == times(SyntheticPopulation(seed: 3, days: 20, parameters: q)))
  }
}
