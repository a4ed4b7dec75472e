// The answer chosen by fine-tuned accuracy: successive halving (Jamieson and
// Talwalkar 2016; Hyperband's inner loop) over the top of the final
// population and the baselines' answers. The fitness ranks designs before
// fine-tuning; what the user gets is the design after it, and a short
// fine-tune separates designs the fitness cannot (NetAdapt's short
// fine-tunes as the proxy). Each round fine-tunes every survivor from its
// start on twice the images of the round before and keeps the better half
// by validation top-1; the test set is never looked at here.
#include <algorithm>
#include <set>

#include "Engine.h"
#include "Records.h"
#include "mixtd/support/Error.h"

namespace mixtd::search::detail {

double Engine::finetuned(const Genome& g, std::int64_t images) {
  const auto key = std::make_pair(SearchSpace::key(g), images);
  if (const auto it = st_.finetuned.find(key); it != st_.finetuned.end()) return it->second;
  const double v = cb_.finetune_validation(space_.taus(g), images);
  require(v >= 0 && v <= 1, "finalist fine-tune returned validation top-1 " + fixed_str(v, 4) + ": legal 0..1");
  st_.finetuned[key] = v;
  checkpoint();  // a fine-tune costs minutes: a resumed run does not repeat it
  return v;
}

std::vector<Finalist> Engine::admit_finalists(std::vector<Member>& ranked) {
  const double target = o_.target_fps;
  const bool check = o_.final_verify;
  // Admitted: up to `finalists` of the population by fitness, then every
  // seed; each design once, each verified in SystemC (in waves of `verify`)
  // when final_verify.
  std::vector<Finalist> finals;
  std::map<std::string, std::size_t> index;  // genome key -> finals
  const std::size_t step = static_cast<std::size_t>(std::max<std::int64_t>(1, o_.verify));
  auto admit = [&](const std::vector<Finalist>& cands, std::size_t quota) {
    std::size_t taken = 0;
    for (std::size_t i = 0; i < cands.size() && taken < quota; i += step) {
      const std::size_t end = std::min(cands.size(), i + step);
      std::vector<Genome> wave;
      for (std::size_t k = i; k < end; ++k) wave.push_back(cands[k].member.genome);
      if (check) simulate(wave);
      for (std::size_t k = i; k < end && taken < quota; ++k) {
        Finalist f = cands[k];
        const std::string key = SearchSpace::key(f.member.genome);
        if (const auto it = index.find(key); it != index.end()) {
          finals[it->second].name += "=" + f.name;  // a seed that is also a top design
          continue;
        }
        if (check) {
          const SimLabel& l = st_.labels.at(key);
          f.member.fps_sim = l.ok ? l.fps_batch1 : 0;
          if (!l.ok || l.fps_batch1 < target) continue;
        }
        index[key] = finals.size();
        finals.push_back(std::move(f));
        ++taken;
      }
    }
  };
  std::vector<Finalist> top, seeds;
  for (std::size_t i = 0; i < ranked.size(); ++i) top.push_back({"top-" + std::to_string(i + 1), ranked[i], {}, false});
  for (const auto& [kind, m] : st_.seeds) seeds.push_back({kind, m, {}, false});
  admit(top, static_cast<std::size_t>(o_.finalists));
  admit(seeds, seeds.size());
  for (Member& m : ranked)  // what the verification found, for the population's report
    if (const auto it = st_.labels.find(SearchSpace::key(m.genome)); check && it != st_.labels.end())
      m.fps_sim = it->second.ok ? it->second.fps_batch1 : 0;
  return finals;
}

std::optional<Member> Engine::successive_halving(std::vector<Member>& ranked, SearchResult& r) {
  require(static_cast<bool>(cb_.finetune_validation),
          "the search's finalists need a fine-tune (SearchCallbacks::finetune_validation); 0 finalists: none");
  std::vector<Finalist> finals = admit_finalists(ranked);
  if (finals.empty()) {
    warn("no finalist reaches the target in SystemC");
    return std::nullopt;
  }

  // The rounds: every survivor fine-tuned on `images`, the better half kept.
  std::vector<std::size_t> alive(finals.size());
  for (std::size_t i = 0; i < alive.size(); ++i) alive[i] = i;
  std::int64_t images = o_.finalist_images;
  for (int round = 1; alive.size() > 1; ++round, images = std::min<std::int64_t>(2 * images, 1000000000)) {
    for (std::size_t i : alive) finals[i].rounds.emplace_back(images, finetuned(finals[i].member.genome, images));
    std::stable_sort(alive.begin(), alive.end(), [&](std::size_t a, std::size_t b) {
      const double va = finals[a].rounds.back().second, vb = finals[b].rounds.back().second;
      if (va != vb) return va > vb;
      if (finals[a].member.accuracy != finals[b].member.accuracy)
        return finals[a].member.accuracy > finals[b].member.accuracy;
      return finals[a].member.genome < finals[b].member.genome;
    });
    const std::size_t before = alive.size();
    alive.resize((alive.size() + 1) / 2);
    if (cb_.log)
      cb_.log("finalists round " + std::to_string(round) + " (" + std::to_string(images) + " images): " +
              std::to_string(before) + " -> " + std::to_string(alive.size()) + ", best " + finals[alive[0]].name +
              " at " + fixed_str(100 * finals[alive[0]].rounds.back().second, 2) + "% validation top-1");
  }
  finals[alive[0]].winner = true;
  r.finalists = finals;
  return finals[alive[0]].member;
}

}  // namespace mixtd::search::detail
