// What dagrt.hpp does with a C++ exception that escapes a task, and with a
// group that goes away while it still counts tasks: the program ends with
// a message (std::terminate), never loses the error silently. Run by
// hpp_check.sh, which checks the message and the abnormal end.
// usage: hpp_throw task|other|loop|group
#include "dagrt.hpp"

#include <cstdio>
#include <cstring>
#include <stdexcept>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    dagrtpp::runtime rt;
    if (std::strcmp(argv[1], "group") == 0) {
        dagrtpp::event never;
        {
            dagrtpp::group g;
            dagrt *r = rt;
            (void)dagrtpp::spawn(rt, g, [&never, r] { (void)never.wait(r); }, DAGRT_SPAWN_FIBER);
        }   // g goes away counting the task
        return 0;
    }
    dagrtpp::group g;
    if (std::strcmp(argv[1], "task") == 0)
        (void)dagrtpp::spawn(rt, g, [] { throw std::runtime_error("boom in a task"); });
    else if (std::strcmp(argv[1], "other") == 0)
        (void)dagrtpp::spawn(rt, g, [] { throw 42; }, DAGRT_SPAWN_FIBER);
    else if (std::strcmp(argv[1], "loop") == 0)
        (void)dagrtpp::parallel_for(rt, 0, 1000, [](size_t i) {
            if (i == 500)
                throw std::out_of_range("boom at 500");
        });
    else
        return 2;
    (void)g.wait(rt);
    std::puts("not reached: the exception was lost");
    return 0;
}
