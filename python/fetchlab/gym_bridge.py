"""The ``external`` process of :class:`fetchlab.gym.FetchEnv`: relays
FetchLab's decisions to the environment and its actions back, through two
named pipes in the directory given as the first argument (``to_env``,
``from_env``). It answers the handshake itself."""

import sys


def main() -> None:
    d = sys.argv[1]
    to_env = open(d + "/to_env", "w", buffering=1)
    from_env = None  # opened at the first decision, when the environment opens its end
    out = sys.stdout
    for line in sys.stdin:
        if line.startswith('{"type":"hello"'):
            out.write('{"version":1}\n')
            out.flush()
            continue
        to_env.write(line)
        if line.startswith('{"type":"decide"'):
            if from_env is None:
                from_env = open(d + "/from_env", "r")
            out.write(from_env.readline())
            out.flush()
    to_env.close()


if __name__ == "__main__":
    main()
