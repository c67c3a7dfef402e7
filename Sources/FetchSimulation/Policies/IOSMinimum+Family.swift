import FetchModels
import FetchTraces
import FetchWorld
import Foundation

/// `ios-minimum[:key=value,...]`: the iOS Minimum scheduler.
package enum IOSMinimumFamily: PolicyFamily {
  package static let info = FamilyInfo(
    "ios-minimum", .settings, learning: .habitModel, style: PolicyStyle(color: "#332288", marker: .triangle),
    summary:
      "the iOS Minimum scheduler: launches where the learned habit model predicts an open soon, under device-wide energy, launch and data budgets")

  package static func makePolicies(_ p: IOSMinimumParameters, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> IOSMinimumPolicy {
    IOSMinimumPolicy.makePolicies(p, device)
  }
}

extension IOSMinimumPolicy {
  /// One scheduler instance per app; at device scope every Minimum or
  /// Custom instance of the device draws on its one ``DeviceBudgetLedger``.
  static func makePolicies(_ params: IOSMinimumParameters, _ device: DeviceReplayInput) -> (Int32, ContentTimeline) -> IOSMinimumPolicy {
    let ledger = device.scope == .device ? device.services.shared(DeviceBudgetLedger.self) { DeviceBudgetLedger() } : nil
    let training = device.training
    let user = device.user
    let learning = device.learning
    return { app, _ in
      IOSMinimumPolicy(
        params: params, world: user.world, training: training, app: app, population: learning?.population,
        fits: learning?.fits, ledger: ledger, pacing: learning?.pacing)
    }
  }
}

extension PolicySpec {
  /// `ios-minimum` with `parameters`.
  package static func iosMinimum(_ parameters: IOSMinimumParameters = IOSMinimumParameters()) -> PolicySpec {
    PolicySpec(IOSMinimumFamily.self, parameters)
  }
}
