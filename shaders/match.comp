#version 450
// Pass 2, a workgroup per character: the exhaustive search over the matchable ranges the
// character's tag filter allows. kMatchGroupSize threads stride over the frames of each range, each keeping
// its best (cost, frame); the bests are reduced across the subgroup, then through shared memory.
// Rules (mmdb::searchExhaustive's): the frame playing seeds the search (periodic and forced
// searches; starts and range ends are unseeded) and a candidate wins only when strictly cheaper;
// frames with |frame - playing| < neighbourhood_frames are skipped when seeded, and the last
// range_end_margin frames of every range always; every candidate pays
// the transition cost; equal costs go to the lowest global frame, so the winner does not depend
// on the subgroup size. Costs accumulate column by column in file order, each difference times
// the character's run-time weight for its column (1 when none is set: the same float), without
// fused multiply-adds, then the frame's cost bias is added (its range's; the frame playing's own),
// so they are the same floats the CPU computes. A box's bound adds the bias of the range being
// scanned, as the CPU's does.
#ifndef MMDB_NO_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif
#include "common.glsl"

layout(local_size_x = MMDB_MATCH_GROUP_SIZE) in;

shared vec4 query[MMDB_MAX_FEATURE_STRIDE / 4];
shared vec4 weight[MMDB_MAX_FEATURE_STRIDE / 4];
shared float best_costs[MMDB_MATCH_GROUP_SIZE];
shared uint best_keys[MMDB_MATCH_GROUP_SIZE];
shared float box_bounds[MMDB_MATCH_GROUP_SIZE];
shared uint workgroup_best;  // orderedBits() of the best cost so far (biases make costs signed)

// Keys are frame + 1; key 0 is the seed (the frame playing), so it wins every tie it is in.
bool better(float cost, uint key, float best_cost, uint best_key) {
  return cost < best_cost || (cost == best_cost && key < best_key);
}

// Float bits in an order uint comparison keeps, negative floats included.
uint orderedBits(float x) {
  uint b = floatBitsToUint(x);
  return (b & 0x80000000u) != 0u ? ~b : (b | 0x80000000u);
}
float fromOrderedBits(uint k) {
  return uintBitsToFloat((k & 0x80000000u) != 0u ? (k & 0x7FFFFFFFu) : ~k);
}

float rowCost(uint frame, float initial, float bias, float bound) {
  precise float cost = initial;
  uint row = frame * (params.feature_stride / 4u);
  for (uint i = 0u; i < params.feature_stride / 4u; ++i) {
    precise vec4 d = (query[i] - features[row + i]) * weight[i];
    cost += d.x * d.x;
    cost += d.y * d.y;
    cost += d.z * d.z;
    cost += d.w * d.w;
    precise float biased = cost + bias;
    if (biased > bound) return biased;  // partial sums only grow: it cannot win
  }
  precise float biased = cost + bias;
  return biased;
}

float boxBound(uint box) {
  precise float bound = params.transition_cost;
  uint row = box * (params.feature_stride / 4u);
  for (uint i = 0u; i < params.feature_stride / 4u; ++i) {
    vec4 q = query[i], lo = bounds_min[row + i], hi = bounds_max[row + i];
    precise vec4 d = mix(mix(vec4(0.0), lo - q, lessThan(q, lo)), q - hi, greaterThan(q, hi)) * weight[i];
    bound += d.x * d.x;
    bound += d.y * d.y;
    bound += d.z * d.z;
    bound += d.w * d.w;
  }
  return bound;
}

void main() {
  uint c = gl_WorkGroupID.x;
  uint tid = gl_LocalInvocationID.x;
  uint reason = results[c].reason;
  if (reason == kReasonNone) return;  // uniform across the workgroup
  bool seeded = reason >= kReasonForced;
  // A range end that moves on skips the frames around the playing one, unseeded.
  bool skip_near = seeded || (reason == kReasonRangeEnd && (params.policies & kPolicyRangeEndMovesOn) != 0u);

  uint vec_count = params.feature_stride / 4u;
  if (tid < vec_count) {
    query[tid] = queries[c * vec_count + tid];
    weight[tid] = weights[c * vec_count + tid];
  }
  barrier();

  uint current = characters[c].current_frame;
  float seed = seeded ? rowCost(current, 0.0, frameBias(current), infinity()) : infinity();
  float best_cost = seed;
  uint best_key = 0u;
  CharacterInput inp = inputs[c];
  uvec4 tags = uvec4(inp.required_tags_lo, inp.required_tags_hi, inp.excluded_tags_lo, inp.excluded_tags_hi);

  if (tid == 0u) workgroup_best = orderedBits(seed);
  barrier();
  const bool pruning = params.bounds_size != 0u;
  for (uint r = 0u; r < params.range_count; ++r) {  // uniform: every thread walks the same ranges
    uvec4 range = ranges[r];
    if ((range.z & tags.x) != tags.x || (range.w & tags.y) != tags.y) continue;
    if ((range.z & tags.z) != 0u || (range.w & tags.w) != 0u) continue;
    // The last range_end_margin frames are no candidate; a range keeps at least its first frame.
    uint end = range.x + (range.y > params.range_end_margin ? range.y - params.range_end_margin : min(range.y, 1u));
    float bias = biases[r];
    for (uint chunk = range.x; chunk < end; chunk += kMatchGroupSize) {
      uint first_box = chunk / max(params.bounds_size, 1u);
      if (pruning) {
        uint box_count = (min(chunk + (kMatchGroupSize - 1u), end - 1u) / params.bounds_size) - first_box + 1u;
        if (tid < box_count) box_bounds[tid] = boxBound(first_box + tid);
        barrier();
      }
      uint f = chunk + tid;
      uint distance = f > current ? f - current : current - f;
      if (f < end && !(skip_near && distance < uint(params.neighbourhood_frames))) {
        float limit = min(best_cost, fromOrderedBits(workgroup_best));
        precise float box = pruning ? box_bounds[f / params.bounds_size - first_box] + bias : 0.0;
        if (!pruning || !(box > limit)) {
          float cost = rowCost(f, params.transition_cost, bias, limit);
          if (cost <= limit && better(cost, f + 1u, best_cost, best_key)) {  // not cut short
            best_cost = cost;
            best_key = f + 1u;
            if (pruning) atomicMin(workgroup_best, orderedBits(cost));
          }
        }
      }
      if (pruning) barrier();  // box_bounds is rewritten by the next chunk
    }
  }

#ifndef MMDB_NO_SUBGROUP
  float group_cost = subgroupMin(best_cost);
  uint group_key = subgroupMin(best_cost == group_cost ? best_key : 0xFFFFFFFFu);
  if (subgroupElect()) {
    best_costs[gl_SubgroupID] = group_cost;
    best_keys[gl_SubgroupID] = group_key;
  }
  uint entries = gl_NumSubgroups;
#else
  best_costs[tid] = best_cost;
  best_keys[tid] = best_key;
  uint entries = kMatchGroupSize;
#endif
  barrier();
  if (tid == 0u) {
    float cost = best_costs[0];
    uint key = best_keys[0];
    for (uint i = 1u; i < entries; ++i) {
      if (better(best_costs[i], best_keys[i], cost, key)) { cost = best_costs[i]; key = best_keys[i]; }
    }
    results[c].frame = key == 0u ? (seeded ? current : kNoFrame) : key - 1u;
    results[c].cost = cost;
    results[c].seed_cost = seed;
  }
}
