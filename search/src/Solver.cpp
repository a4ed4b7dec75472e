#include "mixtd/search/Solver.h"
