#!/usr/bin/env python3
"""Writes walk_turn.bvh: a small procedural locomotion clip for the sample's test.

A CMU-named skeleton (in CMU units, 2.54/45 m, so the cmu preset or the hip-height inference both
give metres) stands, walks forward, arcs left, arcs right, runs and stops, at 30 fps. The gait is
a phase-driven swing of thighs, knees and arms whose stride matches the ground speed, with the
hips kept at the height where the lower foot touches the ground. Deterministic: running it again
writes the same bytes.

Usage: make_walk_bvh.py [OUTPUT]   (default: walk_turn.bvh next to this script)
"""
import math
import os
import sys

FPS = 30
UNIT = 2.54 / 45.0  # metres per CMU unit

# (name, parent index, offset) in CMU units; legs hang straight down, arms in a T pose.
JOINTS = [
    ("Hips", -1, (0.0, 0.0, 0.0)),
    ("LHipJoint", 0, (0.0, 0.0, 0.0)),
    ("LeftUpLeg", 1, (1.6, -1.0, 0.0)),
    ("LeftLeg", 2, (0.0, -7.2, 0.0)),
    ("LeftFoot", 3, (0.0, -7.2, 0.0)),
    ("LeftToeBase", 4, (0.0, -0.9, 2.3)),
    ("RHipJoint", 0, (0.0, 0.0, 0.0)),
    ("RightUpLeg", 6, (-1.6, -1.0, 0.0)),
    ("RightLeg", 7, (0.0, -7.2, 0.0)),
    ("RightFoot", 8, (0.0, -7.2, 0.0)),
    ("RightToeBase", 9, (0.0, -0.9, 2.3)),
    ("LowerBack", 0, (0.0, 0.0, 0.0)),
    ("Spine", 11, (0.0, 2.0, -0.1)),
    ("Spine1", 12, (0.0, 2.0, 0.0)),
    ("Neck", 13, (0.0, 0.0, 0.0)),
    ("Neck1", 14, (0.0, 1.8, 0.1)),
    ("Head", 15, (0.0, 1.8, 0.0)),
    ("LeftShoulder", 13, (0.0, 0.0, 0.0)),
    ("LeftArm", 17, (3.3, 1.2, -0.3)),
    ("LeftForeArm", 18, (5.0, 0.0, 0.0)),
    ("LeftHand", 19, (3.5, 0.0, 0.0)),
    ("RightShoulder", 13, (0.0, 0.0, 0.0)),
    ("RightArm", 21, (-3.3, 1.2, -0.3)),
    ("RightForeArm", 22, (-5.0, 0.0, 0.0)),
    ("RightHand", 23, (-3.5, 0.0, 0.0)),
]
END_SITES = {"LeftToeBase": (0.0, 0.0, 1.2), "RightToeBase": (0.0, 0.0, 1.2),
             "Head": (0.0, 1.8, 0.0), "LeftHand": (1.5, 0.0, 0.0),
             "RightHand": (-1.5, 0.0, 0.0)}

HIP_TO_LEG = 1.0      # vertical drop from Hips to the thigh joint
THIGH = 7.2
SHIN = 7.2
ANKLE_HEIGHT = 0.9
LEG_LENGTH_M = (THIGH + SHIN) * UNIT

# The script: (seconds, ground speed m/s at the end, yaw rate deg/s). Speed ramps linearly
# from the previous segment's end speed.
SCRIPT = [
    (1.0, 0.0, 0.0),     # stand
    (0.6, 1.4, 0.0),     # start walking
    (2.0, 1.4, 0.0),     # walk forward
    (1.5, 1.4, 60.0),    # arc left
    (1.5, 1.4, -60.0),   # arc right
    (0.6, 3.5, 0.0),     # speed up
    (1.5, 3.5, 0.0),     # run
    (1.0, 3.5, -45.0),   # run, arc right
    (0.8, 0.0, 0.0),     # stop
    (1.0, 0.0, 0.0),     # stand
]


def gait(speed):
    """Cycle frequency (Hz) and foot reach (m) in front of and behind the hip for a speed."""
    if speed < 1e-4:
        return 0.9, 0.0
    frequency = 0.75 + 0.2 * speed
    stride = speed / frequency  # ground covered per full cycle
    # Half the cycle in stance: the planted foot travels from +reach to -reach under the hip
    # while the body covers half a stride.
    return frequency, min(0.9 * LEG_LENGTH_M, stride / 4.0)


def leg_angles(phase, reach, running):
    """Thigh and knee flexion (radians, forward positive) for one leg at a gait phase.

    Swing (cos(phase) > 0): the foot eases forward from -reach to +reach with the knee bent.
    Stance: the straight leg carries the foot back linearly, so it stays planted while the body
    moves at constant speed.
    """
    u = math.atan2(math.sin(phase), math.cos(phase))  # -pi .. pi
    if abs(u) <= math.pi / 2:
        foot = reach * math.sin(u)
        knee_bend = (1.6 if running else 1.1) * math.cos(u) ** 2
    else:
        stance = (u - math.pi / 2) if u > 0 else (u + 1.5 * math.pi)  # 0 .. pi
        foot = reach * (1.0 - 2.0 * stance / math.pi)
        knee_bend = 0.0
    thigh = math.asin(foot / LEG_LENGTH_M)
    amplitude = math.asin(reach / LEG_LENGTH_M)
    return thigh, amplitude * knee_bend


def leg_height(thigh, knee):
    return (HIP_TO_LEG + THIGH * math.cos(thigh) + SHIN * math.cos(thigh - knee)
            + ANKLE_HEIGHT)


def frames():
    dt = 1.0 / FPS
    x = z = 0.0
    heading = 0.0  # degrees; 0 faces +Z, positive turns toward +X (left)
    phase = 0.0
    speed = 0.0
    out = []
    for seconds, end_speed, yaw_rate in SCRIPT:
        start_speed = speed
        count = int(round(seconds * FPS))
        for i in range(count):
            speed = start_speed + (end_speed - start_speed) * (i + 1) / count
            frequency, reach = gait(speed)
            phase += 2.0 * math.pi * frequency * dt
            heading += yaw_rate * dt
            rad = math.radians(heading)
            x += math.sin(rad) * speed * dt / UNIT
            z += math.cos(rad) * speed * dt / UNIT
            out.append(pose(x, z, heading, phase, reach, speed))
    return out


def pose(x, z, heading, phase, reach, speed):
    running = speed > 2.5
    left = leg_angles(phase, reach, running)
    right = leg_angles(phase + math.pi, reach, running)
    amplitude = math.asin(reach / LEG_LENGTH_M)
    y = max(leg_height(*left), leg_height(*right))
    lean = math.degrees(0.04 * speed)  # lean into the motion
    channels = [x, y, z, 0.0, heading, lean]
    rotations = {name: (0.0, 0.0, 0.0) for name, _, _ in JOINTS}  # (Z, Y, X) degrees
    for prefix, (thigh, knee) in (("Left", left), ("Right", right)):
        # A positive X rotation swings a hanging limb backward, so forward flexion is negative.
        rotations[prefix + "UpLeg"] = (0.0, 0.0, -math.degrees(thigh))
        rotations[prefix + "Leg"] = (0.0, 0.0, math.degrees(knee))
        rotations[prefix + "Foot"] = (0.0, 0.0, math.degrees(thigh - knee))
    arm_swing = math.degrees(0.8 * amplitude * math.sin(phase))
    # Arms hang down (Z) and swing opposite to the leg on their side (Y).
    rotations["LeftArm"] = (-75.0, arm_swing, 0.0)
    rotations["RightArm"] = (75.0, arm_swing, 0.0)
    rotations["LeftForeArm"] = (0.0, -20.0 - 30.0 * (speed > 2.5), 0.0)
    rotations["RightForeArm"] = (0.0, 20.0 + 30.0 * (speed > 2.5), 0.0)
    rotations["Spine1"] = (0.0, -0.3 * arm_swing, 0.0)  # counter-rotate the shoulders
    for name, _, _ in JOINTS[1:]:
        channels.extend(rotations[name])
    return channels


def hierarchy():
    lines = ["HIERARCHY"]
    children = {i: [] for i in range(len(JOINTS))}
    for i, (_, parent, _) in enumerate(JOINTS):
        if parent >= 0:
            children[parent].append(i)

    def emit(index, depth):
        name, parent, offset = JOINTS[index]
        pad = "\t" * depth
        lines.append(f"{pad}{'ROOT' if parent < 0 else 'JOINT'} {name}")
        lines.append(pad + "{")
        lines.append(f"{pad}\tOFFSET {offset[0]:.5f} {offset[1]:.5f} {offset[2]:.5f}")
        if parent < 0:
            lines.append(f"{pad}\tCHANNELS 6 Xposition Yposition Zposition "
                         "Zrotation Yrotation Xrotation")
        else:
            lines.append(f"{pad}\tCHANNELS 3 Zrotation Yrotation Xrotation")
        for child in children[index]:
            emit(child, depth + 1)
        if name in END_SITES:
            e = END_SITES[name]
            lines.append(f"{pad}\tEnd Site")
            lines.append(pad + "\t{")
            lines.append(f"{pad}\t\tOFFSET {e[0]:.5f} {e[1]:.5f} {e[2]:.5f}")
            lines.append(pad + "\t}")
        lines.append(pad + "}")

    emit(0, 0)
    return lines


def number(value):
    """Shortest fixed-point text with 3 decimals: 0, 1.5, -12.375."""
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "walk_turn.bvh")
    motion = frames()
    lines = hierarchy()
    lines += ["MOTION", f"Frames: {len(motion)}", f"Frame Time: {1.0 / FPS:.7f}"]
    for channels in motion:
        lines.append(" ".join(number(v) for v in channels))
    with open(path, "w", newline="\n") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
