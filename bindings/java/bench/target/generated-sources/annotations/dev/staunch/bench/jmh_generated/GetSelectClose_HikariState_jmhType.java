package dev.staunch.bench.jmh_generated;
public class GetSelectClose_HikariState_jmhType extends GetSelectClose_HikariState_jmhType_B3 {
}

