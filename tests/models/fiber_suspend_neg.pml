/* Negative control for fiber_suspend.pml: publish before switching out.
 * spin must find the assertion violation (two workers on one stack). */
#define WRONG_ORDER
#include "fiber_suspend.pml"
