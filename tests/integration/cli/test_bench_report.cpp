// cachet-bench's cmpthese layout, checked against tables printed by Perl's own
// Benchmark::cmpthese (Benchmark 1.23, Debian 12) for the same rates.
#include <catch2/catch.hpp>
#include <string>

#include "cmpthese.h"

namespace cachet::bench {

TEST_CASE("two rows, as the Perl memcached seed") {
  CHECK(FormatCmpthese({{"pp", 21167}, {"fast", 197745}}) ==
        "         Rate   pp fast\n"
        "pp    21167/s   -- -89%\n"
        "fast 197745/s 834%   --\n");
}

TEST_CASE("rows sorted by rate whatever the input order") {
  CHECK(FormatCmpthese({{"jet", 119673}, {"redis", 34841}, {"hiredis", 109818}, {"fast", 80082}}) ==
        "            Rate   redis    fast hiredis     jet\n"
        "redis    34841/s      --    -56%    -68%    -71%\n"
        "fast     80082/s    130%      --    -27%    -33%\n"
        "hiredis 109818/s    215%     37%      --     -8%\n"
        "jet     119673/s    243%     49%      9%      --\n");
}

TEST_CASE("narrow columns are widened towards 80 characters, tiny rates in %e") {
  CHECK(FormatCmpthese(
            {{"alpha", 1234.5}, {"b", 99.3}, {"gamma_long_name", 2222222.2}, {"d", 0.03}}) ==
        "                      Rate           d            b        alpha gamma_long_name\n"
        "d               3.00e-02/s          --        -100%        -100%           -100%\n"
        "b                   99.3/s     330900%           --         -92%           -100%\n"
        "alpha               1234/s    4114900%        1143%           --           -100%\n"
        "gamma_long_name  2222222/s 7407407233%     2237787%      179910%              --\n");
}

TEST_CASE("many columns already as wide as the widest stay as they are") {
  CHECK(FormatCmpthese({{"a", 1.3},
                        {"b", 2.3},
                        {"c", 3.3},
                        {"d", 4.3},
                        {"e", 5.3},
                        {"f", 6.3},
                        {"g", 7.3},
                        {"h", 8.3},
                        {"i", 9.3},
                        {"j", 10.3},
                        {"k", 11.3},
                        {"l", 12.3},
                        {"m", 13.3}}) ==
        "    Rate    a    b    c    d    e    f    g    h    i    j    k    l    m\n"
        "a 1.30/s   -- -43% -61% -70% -75% -79% -82% -84% -86% -87% -88% -89% -90%\n"
        "b 2.30/s  77%   -- -30% -47% -57% -63% -68% -72% -75% -78% -80% -81% -83%\n"
        "c 3.30/s 154%  43%   -- -23% -38% -48% -55% -60% -65% -68% -71% -73% -75%\n"
        "d 4.30/s 231%  87%  30%   -- -19% -32% -41% -48% -54% -58% -62% -65% -68%\n"
        "e 5.30/s 308% 130%  61%  23%   -- -16% -27% -36% -43% -49% -53% -57% -60%\n"
        "f 6.30/s 385% 174%  91%  47%  19%   -- -14% -24% -32% -39% -44% -49% -53%\n"
        "g 7.30/s 462% 217% 121%  70%  38%  16%   -- -12% -22% -29% -35% -41% -45%\n"
        "h 8.30/s 538% 261% 152%  93%  57%  32%  14%   -- -11% -19% -27% -33% -38%\n"
        "i 9.30/s 615% 304% 182% 116%  75%  48%  27%  12%   -- -10% -18% -24% -30%\n"
        "j 10.3/s 692% 348% 212% 140%  94%  63%  41%  24%  11%   --  -9% -16% -23%\n"
        "k 11.3/s 769% 391% 242% 163% 113%  79%  55%  36%  22%  10%   --  -8% -15%\n"
        "l 12.3/s 846% 435% 273% 186% 132%  95%  68%  48%  32%  19%   9%   --  -8%\n"
        "m 13.3/s 923% 478% 303% 209% 151% 111%  82%  60%  43%  29%  18%   8%   --\n");
}

TEST_CASE("slow entries switch the rate column to seconds per iteration") {
  CHECK(FormatCmpthese({{"a", 0.5}, {"b", 0.25}}) ==
        "  s/iter    b    a\n"
        "b   4.00   -- -50%\n"
        "a   2.00 100%   --\n");
}

TEST_CASE("one row and no rows") {
  CHECK(FormatCmpthese({{"default", 123456.7}}) ==
        "            Rate default\n"
        "default 123457/s      --\n");
  CHECK(FormatCmpthese({}).empty());
}

}  // namespace cachet::bench
